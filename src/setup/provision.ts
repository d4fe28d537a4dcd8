/**
 * What `edge-agent provision` does, as small functions the interactive and the non-interactive
 * front ends share: read the existing setup, merge the answers into it (what is not given is
 * kept), check what can be checked (API token, MQTT connection, scanners), write config and
 * secrets atomically (secrets 0600), and print a summary that never shows a secret.
 *
 * Tested in test/integration/provision-cli.test.ts (flags, checks, secrets 0600, --discover-port),
 * test/integration/provision-wizard.test.ts (the interactive front end) and
 * test/integration/provision-e2e.test.ts.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { AgentError } from '../core/errors.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { makePrivateDir } from '../core/private-files.js';
import { checkApiToken } from './doctor/api.js';
import type { CheckResult } from './doctor/check.js';
import { checkMqttConnection } from './doctor/mqtt.js';
import { checkScanners } from './doctor/scanners.js';
import { discoverScanners, scannerProbe } from './scanner-probe.js';
import { verifyTemplateKey } from '../store/template-cache.js';
import { defaultDataDir } from '../config/locate.js';
import { BADGE_LINE_FORMATS, parseConfig, ScannerConfigSchema, type AgentConfig, type ScannerConfig } from '../config/config.js';
import { mergeConfig, setPath } from '../config/layers.js';
import { readConfigFile } from '../config/load.js';
import { emptySecrets, generateKey, loadSecrets, maskSecret, writeSecrets, type Secrets } from '../config/secrets.js';

export type SecretValues = Omit<Secrets, 'sources'>;

/** What the technician gave; `undefined` keeps what the existing setup has. */
export interface ProvisionAnswers {
  terminalId?: string;
  site?: string;
  timeZone?: string;
  mode?: string;
  dataDir?: string;
  apiUrl?: string | null;
  pathForm?: string;
  clientId?: string;
  mqttUrl?: string | null;
  mqttUsername?: string | null;
  tlsCa?: string | null;
  tlsCert?: string | null;
  tlsKey?: string | null;
  upstream?: string[];
  scanners?: ScannerConfig[];
  apiKey?: string;
  apiSecret?: string;
  mqttPassword?: string | null;
  templateKey?: Buffer;
  siteKey?: Buffer;
  /** The site's ops key (signs MQTT commands); null removes it. */
  opsKey?: Buffer | null;
  /** Generate a new ops key (when none is given). */
  generateOpsKey?: boolean;
  /** Operators' ops keys by key id, added to (or replacing) those held. */
  operatorKeys?: Record<string, Buffer>;
}

export interface ExistingSetup {
  /** The config file as written (unvalidated: provision may be run to repair it). */
  raw: Record<string, unknown>;
  secrets: SecretValues;
  exists: boolean;
}

/**
 * `family:path[:baud][:format]`, e.g. `r30x:/dev/fingerprint0:57600`, `gt521:/dev/ttyUSB0`,
 * `badge-serial:/dev/ttyUSB1:9600:em4100-hex` or `badge-hid:/dev/hidraw2:wiegand26` (a badge
 * reader's line format last).
 */
export function parseScannerSpec(spec: string): ScannerConfig {
  const formats = BADGE_LINE_FORMATS.join('|');
  const m = new RegExp(`^([a-z0-9-]+):(.+?)(?::(\\d+))?(?::(${formats}))?$`).exec(spec.trim());
  const bad = (why: string) =>
    new AgentError(
      'CLI_USAGE',
      `--scanner ${spec}: ${why}`,
      { flag: 'scanner', value: spec },
      {
        hint: 'write --scanner family:path[:baud][:format], e.g. --scanner r30x:/dev/fingerprint0:57600 or badge-serial:/dev/ttyUSB1:9600:em4100-hex (families: r30x, gt521, iris-hid, badge-serial, badge-hid)',
      },
    );
  if (!m) throw bad('not family:path[:baud][:format]');
  const candidate: Record<string, unknown> = { family: m[1], path: m[2] };
  if (m[3]) candidate.baud = Number(m[3]);
  if (m[4]) candidate.format = m[4];
  const r = ScannerConfigSchema.safeParse(candidate);
  if (!r.success) throw bad(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return r.data;
}

export { isOperatorKeyId, readKeyFile, readSecretFile } from '../config/secrets.js';

export function readExisting(configFile: string, secretsFile: string): ExistingSetup {
  const exists = existsSync(configFile);
  const raw = exists ? readConfigFile(configFile) : {};
  let secrets: SecretValues = emptySecrets();
  if (existsSync(secretsFile)) {
    const { sources: _sources, ...values } = loadSecrets({ file: secretsFile, credentialsDir: null });
    secrets = values;
  }
  return { raw, secrets, exists };
}

/** An answer given (not undefined) set at its key. */
function set(obj: Record<string, unknown>, path: string[], value: unknown): void {
  if (value !== undefined) setPath(obj, path, value);
}

export interface MergedSetup {
  raw: Record<string, unknown>;
  config: AgentConfig;
  secrets: SecretValues;
  /** Dotted keys and secret names that this run changed. */
  changed: string[];
  generatedTemplateKey: boolean;
  generatedOpsKey: boolean;
}

/** Where the data folder goes when nobody said (the same rule as loading a config that names none). */
export { defaultDataDir };

/**
 * Answers over the existing setup. Without `upstream` it stays as it was (default api), less an
 * upstream whose URL was removed: `--mqtt` alone is monitoring, never delivery. configVersion + 1.
 */

export function mergeSetup(existing: ExistingSetup, a: ProvisionAnswers, paths: { secretsFile: string; configFile?: string }): MergedSetup {
  const over: Record<string, unknown> = {};
  set(over, ['terminal', 'id'], a.terminalId);
  set(over, ['terminal', 'site'], a.site);
  set(over, ['terminal', 'timeZone'], a.timeZone);
  set(over, ['terminal', 'mode'], a.mode);
  set(over, ['dataDir'], a.dataDir === undefined ? undefined : resolve(a.dataDir));
  set(over, ['api', 'url'], a.apiUrl);
  set(over, ['api', 'pathForm'], a.pathForm);
  set(over, ['api', 'clientId'], a.clientId);
  set(over, ['mqtt', 'url'], a.mqttUrl);
  set(over, ['mqtt', 'username'], a.mqttUsername);
  set(over, ['mqtt', 'tls', 'ca'], a.tlsCa === undefined || a.tlsCa === null ? a.tlsCa : resolve(a.tlsCa));
  set(over, ['mqtt', 'tls', 'cert'], a.tlsCert === undefined || a.tlsCert === null ? a.tlsCert : resolve(a.tlsCert));
  set(over, ['mqtt', 'tls', 'key'], a.tlsKey === undefined || a.tlsKey === null ? a.tlsKey : resolve(a.tlsKey));
  set(over, ['scanners'], a.scanners);
  set(over, ['secretsFile'], resolve(paths.secretsFile));
  let raw = mergeConfig(existing.raw, over);
  // The data folder must not depend on the folder provision (or the agent) happens to run in.
  if (raw.dataDir === undefined) raw.dataDir = defaultDataDir(paths.configFile);
  if (a.upstream) raw.upstream = a.upstream;
  else if (Array.isArray(raw.upstream) && (a.apiUrl !== undefined || a.mqttUrl !== undefined)) {
    // An upstream whose URL this run removed goes with it; none is ever added without --upstream:
    // a broker URL alone is monitoring, punches go to the broker only when asked for.
    const api = (raw.api as Record<string, unknown> | undefined)?.url;
    const mq = (raw.mqtt as Record<string, unknown> | undefined)?.url;
    const kept = (raw.upstream as unknown[]).filter((u) => (u === 'api' && api) || (u === 'mqtt' && mq));
    raw.upstream = kept.length ? kept : ['api'];
  }
  raw = { ...raw, configVersion: (typeof existing.raw.configVersion === 'number' ? existing.raw.configVersion : 0) + 1 };
  const config = parseConfig(raw, 'the new configuration');

  const changed = changedKeys(existing.raw, raw).filter((k) => k !== 'configVersion');
  const secrets: SecretValues = { ...existing.secrets };
  const setSecret = <K extends keyof SecretValues>(k: K, v: SecretValues[K] | undefined) => {
    if (v === undefined) return;
    const before = secrets[k];
    const same = Buffer.isBuffer(before) && Buffer.isBuffer(v) ? before.equals(v) : before === v;
    if (!same) changed.push(k);
    secrets[k] = v;
  };
  setSecret('apiKey', a.apiKey);
  setSecret('apiSecret', a.apiSecret);
  setSecret('mqttPassword', a.mqttPassword);
  setSecret('templateKey', a.templateKey);
  setSecret('siteKey', a.siteKey);
  setSecret('opsKey', a.opsKey);
  for (const [id, key] of Object.entries(a.operatorKeys ?? {})) {
    if (!secrets.opsKeys[id]?.equals(key)) changed.push(`opsKeys.${id}`);
    secrets.opsKeys = { ...secrets.opsKeys, [id]: key };
  }
  let generatedOpsKey = false;
  if (a.generateOpsKey && a.opsKey === undefined) {
    secrets.opsKey = generateKey();
    generatedOpsKey = true;
    changed.push('opsKey');
  }
  let generatedTemplateKey = false;
  if (!secrets.templateKey) {
    secrets.templateKey = generateKey();
    generatedTemplateKey = true;
    changed.push('templateKey');
  }
  return { raw, config, secrets, changed, generatedTemplateKey, generatedOpsKey };
}

function changedKeys(a: unknown, b: unknown, prefix = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if ((isObj(a) || a === undefined) && (isObj(b) || b === undefined) && (isObj(a) || isObj(b))) {
    const x = (a ?? {}) as Record<string, unknown>;
    const y = (b ?? {}) as Record<string, unknown>;
    const out: string[] = [];
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) out.push(...changedKeys(x[k], y[k], prefix ? `${prefix}.${k}` : k));
    return out;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix];
}

/** Creates the data folder 0700, writes the config (0644, no secrets in it) and the secrets (0600), each atomically. */
export function writeSetup(configFile: string, secretsFile: string, merged: MergedSetup): void {
  const header = `# edge-agent configuration, written by "edge-agent provision" (configVersion ${merged.config.configVersion}).\n# Secrets are not here: they are in ${resolve(secretsFile)} (mode 0600).\n`;
  makePrivateDir(merged.config.dataDir, { tighten: true });
  writeSecrets(secretsFile, merged.secrets);
  writeFileAtomic(configFile, header + YAML.stringify(merged.raw), 0o644);
}

/** The summary a technician reads: every setting, secrets masked. */
export function summarize(config: AgentConfig, secrets: SecretValues, files: { config: string; secrets: string }): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['config file', resolve(files.config)],
    ['secrets file', `${resolve(files.secrets)} (0600)`],
    ['config version', String(config.configVersion)],
    [
      'terminal',
      `${config.terminal.id} at site ${config.terminal.site}, mode ${config.terminal.mode}, time zone ${config.terminal.timeZone}`,
    ],
    ['data folder', config.dataDir],
    ['upstream', config.upstream.join(', ')],
    ['API', config.api.url ? `${config.api.url} (path form ${config.api.pathForm}, client ${config.api.clientId})` : '(none)'],
    ['API key', maskSecret(secrets.apiKey)],
    ['API secret', maskSecret(secrets.apiSecret)],
    [
      'MQTT',
      config.mqtt.url
        ? `${config.mqtt.url}${config.mqtt.username ? ` as ${config.mqtt.username}` : ''}${config.mqtt.tls.ca ? `, CA ${config.mqtt.tls.ca}` : ''}${config.mqtt.tls.cert ? `, client cert ${config.mqtt.tls.cert}` : ''}`
        : '(none)',
    ],
    ['MQTT password', maskSecret(secrets.mqttPassword)],
    [
      'scanners',
      config.scanners.length ? config.scanners.map((s) => `${s.family}:${s.path}${s.baud ? `:${s.baud}` : ''}`).join(', ') : '(none)',
    ],
    ['template key', maskSecret(secrets.templateKey)],
    ['site key', maskSecret(secrets.siteKey)],
    ['ops key', opsKeySummary(config, secrets)],
  ];
  return rows;
}

/** Where the keys that sign MQTT commands are, and what happens without one. */
export function opsKeySummary(config: AgentConfig, secrets: Pick<SecretValues, 'opsKey' | 'opsKeys'>): string {
  const operators = Object.keys(secrets.opsKeys ?? {}).sort();
  const held = `${maskSecret(secrets.opsKey)}${operators.length ? `; operator keys: ${operators.join(', ')}` : ''}`;
  const none = !secrets.opsKey && operators.length === 0;
  return config.mqtt.url && config.ops.enabled && none
    ? `${held}: MQTT commands are refused until one is set (--ops-key-file or --generate-ops-key)`
    : held;
}

export function formatSummary(rows: Array<[string, string]>): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n');
}

/** API token, MQTT connection and each scanner, for what the new setup configures. */
export async function checkSetup(config: AgentConfig, secrets: SecretValues): Promise<CheckResult[]> {
  const [api, broker] = await Promise.all([
    checkApiToken({
      url: config.api.url,
      pathForm: config.api.pathForm,
      clientId: config.api.clientId,
      timeoutMs: Math.min(config.api.timeoutMs, 10_000),
      apiKey: secrets.apiKey,
      apiSecret: secrets.apiSecret,
      required: config.upstream.includes('api'),
    }),
    checkMqttConnection({ config, secrets, timeoutMs: 10_000 }),
  ]);
  const scanners = config.scanners.length ? await checkScanners(config.scanners, scannerProbe) : [];
  return [api, broker, ...scanners];
}

/** The error that stops provisioning when a check failed (nothing is written then). */
export function checksFailure(checks: CheckResult[]): AgentError | null {
  const failed = checks.filter((c) => c.status === 'fail');
  if (!failed.length) return null;
  // Every failed check with its own hint: fixing only the first would fail again on the next.
  const hints = failed.filter((c) => c.hint).map((c) => `${c.name}: ${c.hint}`);
  return new AgentError(
    'PROVISION_CHECK_FAILED',
    `nothing written: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ')}`,
    { checks: failed.map((c) => c.name) },
    {
      hint: `${hints.length ? `${hints.join('; ')}; ` : ''}fix ${failed.length > 1 ? `these ${failed.length}` : 'it'} and run again, or pass --no-check to write without checking`,
    },
  );
}

export interface ProvisionResult {
  merged: MergedSetup;
  checks: CheckResult[];
}

/**
 * A new template key must still open the templates already stored (they are encrypted with the
 * old one): a key that does not is refused, whatever --no-check says, so no template is lost.
 */
export async function refuseForeignTemplateKey(merged: MergedSetup, existing: ExistingSetup): Promise<void> {
  const next = merged.secrets.templateKey;
  const before = existing.secrets.templateKey;
  if (!next || before?.equals(next)) return;
  const verdict = await verifyTemplateKey(merged.config.dataDir, next);
  if (!verdict.ok) {
    throw new AgentError(
      'PROVISION_TEMPLATE_KEY_MISMATCH',
      `the template key given does not open the templates stored in ${merged.config.dataDir}: ${verdict.detail ?? 'wrong key'}; nothing written`,
      { dataDir: merged.config.dataDir },
      {
        hint: 'give the key the templates were stored with (--template-key-file, from the old secrets file or backup); to start over instead, delete the templates and sync them again from the site',
      },
    );
  }
}

/** Read, merge, check, write: what both front ends do once they have the answers. */
export async function provision(
  files: { config: string; secrets: string },
  answers: ProvisionAnswers,
  options: { check: boolean; discover?: boolean | { port: string } },
): Promise<ProvisionResult> {
  const existing = readExisting(files.config, files.secrets);
  if (options.discover) {
    const found = await discoverScanners(typeof options.discover === 'object' ? options.discover : {});
    if (!found.length) {
      throw new AgentError(
        'PROVISION_NOTHING_FOUND',
        `discovery found no scanner${typeof options.discover === 'object' ? ` on ${options.discover.port}` : ''}; nothing written`,
        {},
        { hint: 'check the cable and power (edge-agent devices lists what answers), or give --scanner family:path[:baud]' },
      );
    }
    const known = answers.scanners ?? (existing.raw.scanners as ScannerConfig[] | undefined) ?? [];
    answers = { ...answers, scanners: [...known, ...found.filter((f) => !known.some((k) => k.path === f.path))] };
  }
  const merged = mergeSetup(existing, answers, { secretsFile: files.secrets, configFile: files.config });
  await refuseForeignTemplateKey(merged, existing);
  const checks = options.check ? await checkSetup(merged.config, merged.secrets) : [];
  const err = checksFailure(checks);
  if (err) throw err;
  writeSetup(files.config, files.secrets, merged);
  return { merged, checks };
}
