/**
 * `edge-agent doctor`: every check a technician needs to trust a terminal, each one a small
 * function taking what it needs and answering pass, warn or fail with a detail and a hint.
 * A check whose part is not configured is a `warn` saying so, never a pass.
 */
import { existsSync, statSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import mqtt from 'mqtt';
import { AttendanceClient } from '../api/client.js';
import { AgentError, describeError, isAgentError } from '../core/errors.js';
import { looseModes } from '../core/private-files.js';
import { SqliteDatabase } from '../core/sqlite.js';
import { withTimeout } from '../core/time.js';
import { mqttClientOptions } from '../daemon/upstreams.js';
import { agentDatabasePath } from '../store/agent-db.js';
import { Outbox, type HeldStatus, type OutboxStatus } from '../store/outbox.js';
import { clockSources, DEFAULT_SOURCES, detectClock, type ClockState } from '../terminal/clock-sources.js';
import { clockReport } from './clock-report.js';
import { clockAlerts, type Alert } from '../ops/alerts.js';
import { loadConfig, secretsFilePath, type AgentConfig, type LoadConfigOptions, type ScannerConfig } from '../config/config.js';
import { loadSecrets, type Secrets } from '../config/secrets.js';
import { noConfigError, type ConfigLocation } from '../config/locate.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do; null when there is nothing to do. */
  hint: string | null;
}

/** The figures behind the clock check, for --json (`clock` beside `checks`). */
export interface ClockFigures {
  trusted: boolean;
  source: string;
  lastTrustedAt: string | null;
  steps: number;
  lastStep: { sizeSec: number; at: string } | null;
  held: HeldStatus;
  alerts: Alert[];
}

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
  /** The clock as the time authority judges it, with the terminal's database; absent without one. */
  clock?: ClockFigures;
}

const pass = (name: string, detail: string): CheckResult => ({ name, status: 'pass', detail, hint: null });
const warn = (name: string, detail: string, hint: string): CheckResult => ({ name, status: 'warn', detail, hint });
const fail = (name: string, detail: string, hint: string): CheckResult => ({ name, status: 'fail', detail, hint });

/** A failed check from an error: its code and message as detail, its hint as hint. */
function fromError(name: string, err: unknown, fallbackHint: string, status: CheckStatus = 'fail'): CheckResult {
  const e = isAgentError(err) ? err : null;
  return { name, status, detail: e ? `${e.code}: ${e.message}` : describeError(err), hint: e?.hint ?? fallbackHint };
}

// ---- config and secrets ------------------------------------------------------------------

export function checkConfig(
  options: LoadConfigOptions,
  location?: ConfigLocation,
): { result: CheckResult; config: (AgentConfig & { source: string | null }) | null } {
  if (location && !location.file) {
    return {
      result: fail('config', `no configuration found; looked at: ${location.looked.join(', ')}`, noConfigError(location).hint!),
      config: null,
    };
  }
  try {
    const config = loadConfig(options);
    const whose = location?.origin === 'demo' ? " (the embedded demo's: no other configuration was found)" : '';
    return {
      result: pass(
        'config',
        `${config.source ?? 'defaults and environment'}${whose} is valid (configVersion ${config.configVersion}, terminal ${config.terminal.id} at ${config.terminal.site}, data ${config.dataDir})`,
      ),
      config,
    };
  } catch (err) {
    const r = fromError('config', err, 'fix the config file or run "edge-agent provision"');
    if (isAgentError(err) && typeof err.context.key === 'string') r.detail += ` [key: ${err.context.key}]`;
    return { result: r, config: null };
  }
}

export function checkSecrets(
  config: AgentConfig,
  options: { file?: string; credentialsDir?: string | null } = {},
): { result: CheckResult; secrets: Secrets | null } {
  const file = options.file ?? secretsFilePath(config);
  const credentialsDir = options.credentialsDir === undefined ? (process.env.CREDENTIALS_DIRECTORY ?? null) : options.credentialsDir;
  if (!existsSync(file) && !credentialsDir) {
    return {
      result: fail('secrets', `no secrets file at ${file} and no systemd credentials`, 'run "edge-agent provision" to write it'),
      secrets: null,
    };
  }
  let secrets: Secrets;
  try {
    secrets = loadSecrets({ file, credentialsDir });
  } catch (err) {
    return { result: fromError('secrets', err, `check ${file}`), secrets: null };
  }
  const missing: string[] = [];
  if (config.upstream.includes('api') || config.api.url) {
    if (!secrets.apiKey) missing.push('apiKey');
    if (!secrets.apiSecret) missing.push('apiSecret');
  }
  if (!secrets.templateKey) missing.push('templateKey');
  const where = existsSync(file)
    ? `${file} (mode ${(statSync(file).mode & 0o777).toString(8).padStart(4, '0')})`
    : `credentials in ${credentialsDir}`;
  if (missing.length)
    return {
      result: fail(
        'secrets',
        `${where} is readable but lacks ${missing.join(', ')}`,
        'run "edge-agent provision" and give them (a template key is generated when none is given)',
      ),
      secrets,
    };
  return { result: pass('secrets', `${where} is readable and private; has ${Object.keys(secrets.sources).join(', ')}`), secrets };
}

// ---- network -----------------------------------------------------------------------------

export interface ApiCheckInput {
  url: string | null;
  pathForm: AgentConfig['api']['pathForm'];
  clientId: string;
  timeoutMs: number;
  apiKey: string | null;
  apiSecret: string | null;
  /** Punches go to the API (`upstream` includes api): then a missing URL is a failure. */
  required?: boolean;
}

/** Fetches a token with the API key and secret. */
export async function checkApiToken(input: ApiCheckInput): Promise<CheckResult> {
  const name = 'api-token';
  if (!input.url && input.required)
    return fail(
      name,
      'upstream includes api but api.url is not set: the agent cannot start',
      'give --api URL to "edge-agent provision", or --upstream mqtt',
    );
  if (!input.url)
    return warn(
      name,
      'no API configured (api.url is null): punches go to the broker only (upstream mqtt)',
      'set --api URL with "edge-agent provision" if this terminal should deliver to the attendance API',
    );
  if (!input.apiKey || !input.apiSecret)
    return fail(
      name,
      `API ${input.url} configured but the ${input.apiKey ? 'secret' : 'key'} is missing`,
      'give --api-key and --api-secret-file to "edge-agent provision"',
    );
  const client = new AttendanceClient({
    baseUrl: input.url,
    clientId: input.clientId,
    apiKey: input.apiKey,
    apiSecret: input.apiSecret,
    pathForm: input.pathForm,
    timeoutMs: input.timeoutMs,
  });
  try {
    await client.getToken();
    return pass(name, `${input.url} gave a token for client ${input.clientId}`);
  } catch (err) {
    return fromError(name, err, `check that ${input.url} is reachable from this terminal`);
  }
}

export interface MqttCheckInput {
  config: AgentConfig;
  secrets: Pick<Secrets, 'mqttUsername' | 'mqttPassword'>;
  timeoutMs?: number;
}

/** Connects to the broker with the configured credentials and TLS files, then disconnects. */
export async function checkMqttConnection(input: MqttCheckInput): Promise<CheckResult> {
  const name = 'mqtt';
  const url = input.config.mqtt.url;
  if (!url && input.config.upstream.includes('mqtt'))
    return fail(
      name,
      'upstream includes mqtt but mqtt.url is not set: the agent cannot start',
      'give --mqtt URL to "edge-agent provision", or --upstream api',
    );
  if (!url)
    return warn(
      name,
      'no MQTT broker configured (mqtt.url is null): no remote monitoring',
      'set --mqtt URL with "edge-agent provision" so operations can see this terminal (monitoring only: punches go to the broker as well only with --upstream mqtt or api,mqtt)',
    );
  const timeoutMs = input.timeoutMs ?? 10_000;
  let client: mqtt.MqttClient | null = null;
  try {
    // A client id of its own: the terminal's id would throw the running agent off the broker.
    const options = {
      ...mqttClientOptions(input.config, input.secrets, `${input.config.terminal.id}-doctor-${process.pid}`),
      reconnectPeriod: 0,
      connectTimeout: timeoutMs,
    };
    client = mqtt.connect(url, options);
    const c = client;
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        c.once('connect', () => resolve());
        c.once('error', reject);
        c.once('close', () => reject(new AgentError('OPS_MQTT_CLOSED', `the broker at ${url} closed the connection`, { url })));
      }),
      timeoutMs,
      () => new AgentError('OPS_MQTT_TIMEOUT', `no answer from the broker at ${url} within ${timeoutMs} ms`, { url }, { retryable: true }),
    );
    const role = input.config.upstream.includes('mqtt')
      ? 'monitoring and delivery of punches'
      : 'monitoring only: punches are not delivered here';
    return pass(
      name,
      `connected to ${url}${options.username ? ` as ${options.username}` : ''}${options.ca || options.cert ? ' with TLS files' : ''} (${role})`,
    );
  } catch (err) {
    const e = err as { code?: unknown; message?: string };
    const refused = /not authori[sz]ed|bad user ?name or password/i.test(e.message ?? '') || e.code === 4 || e.code === 5;
    if (isAgentError(err)) return fromError(name, err, `check that ${url} is reachable from this terminal`);
    return fail(
      name,
      `cannot connect to ${url}: ${e.message ?? String(err)}`,
      refused
        ? 'the broker refused the credentials: check --mqtt-username and the MQTT password'
        : `check that ${url} is reachable from this terminal (firewall, port, TLS files)`,
    );
  } finally {
    client?.end(true);
  }
}

// ---- scanners ----------------------------------------------------------------------------

/** Opens a scanner and asks what it is; the driver's `openScanner` is passed in. */
export type ScannerProbe = (scanner: ScannerConfig) => Promise<{ model: string; firmware: string | null; serial: string | null }>;

/** A scanner as the running agent reports it (control socket `status`). */
export interface HeldScanner {
  key: string;
  status: string;
  model?: string | null;
}

/** The key the agent gives a configured scanner (`family:path`, `sim:family`). */
export function heldScannerKey(s: ScannerConfig): string {
  return s.path === 'sim' ? `sim:${s.family}` : `${s.family}:${s.path}`;
}

/**
 * Opens each scanner and asks what it is; while the agent runs it holds the ports, so the
 * agent's own view (`held`, from its control socket) is judged instead.
 */
export async function checkScanners(
  scanners: readonly ScannerConfig[],
  probe: ScannerProbe | null,
  options: { simulate?: boolean; daemonRunning?: boolean; held?: HeldScanner[] | null } = {},
): Promise<CheckResult[]> {
  if (!scanners.length) {
    return [
      warn(
        'scanners',
        options.simulate ? 'no scanners configured; the agent runs simulated scanners (simulate: true)' : 'no scanners configured',
        'add them with "edge-agent provision --scanner family:path[:baud]"',
      ),
    ];
  }
  const out: CheckResult[] = [];
  for (const s of scanners) {
    const name = `scanner ${s.family}:${s.path}`;
    if (options.daemonRunning) {
      const view = options.held?.find((h) => h.key === heldScannerKey(s));
      if (!view)
        out.push(
          warn(
            name,
            'not opened: the running agent holds the scanners and did not report this one',
            'stop the agent (systemctl stop edge-agent) to test the scanner directly',
          ),
        );
      else if (view.status === 'ready') out.push(pass(name, `answers (through the running agent)${view.model ? `: ${view.model}` : ''}`));
      else
        out.push(
          fail(
            name,
            `the running agent cannot use it: ${view.status}`,
            `check the cable and power; journalctl -u edge-agent shows why (ls -l ${s.path})`,
          ),
        );
      continue;
    }
    if (!probe) {
      out.push(
        warn(
          name,
          'not checked: this build has no scanner drivers',
          'this build has no drivers for it: reinstall edge-agent from its release',
        ),
      );
      continue;
    }
    try {
      const info = await probe(s);
      out.push(
        pass(
          name,
          `answers: ${info.model}${info.firmware ? ` firmware ${info.firmware}` : ''}${info.serial ? ` serial ${info.serial}` : ''}`,
        ),
      );
    } catch (err) {
      const r = fromError(name, err, `check the cable and that ${s.path} is the scanner (ls -l /dev/fingerprint* /dev/iris* /dev/ttyUSB*)`);
      r.hint = scannerHint(s, r.detail) ?? r.hint;
      out.push(r);
    }
  }
  return out;
}

/**
 * What a failed probe most likely means, where the driver's own hint would mislead: a port held by
 * another process (the running agent of another data folder, a second command) is not a baud rate
 * problem; a module that stays silent is most often at another baud rate or of another family.
 */
export function scannerHint(s: ScannerConfig, detail: string): string | null {
  if (/TRANSPORT_BUSY|cannot lock port|resource temporarily unavailable|EAGAIN|EBUSY|in use by another/i.test(detail)) {
    // The driver names the holder where /proc shows it (TRANSPORT_BUSY ... pid N (command)).
    const named = /\bpid \d+/.test(detail);
    return `another process holds ${s.path}${named ? ' (named above)' : ''}: the running agent (systemctl status edge-agent; stop it to test the scanner here, or enrol through it) or another edge-agent command${named ? '' : `; "fuser -v ${s.path}" names it`}`;
  }
  if (/TIMEOUT|no answer|no reply/i.test(detail) && s.family !== 'iris-hid') {
    return `nothing answered ${s.family} at ${s.baud ?? 'its default'} baud: a module at another baud rate or of another family stays silent; "edge-agent devices --port ${s.path}" tries every family and baud rate and says which answers (then provision --scanner family:${s.path}:baud)`;
  }
  return null;
}

// ---- storage -----------------------------------------------------------------------------

/** Runs `PRAGMA integrity_check` on the agent database (read-only). */
export async function checkDatabase(dataDir: string): Promise<CheckResult> {
  const name = 'database';
  const path = agentDatabasePath(dataDir);
  if (!existsSync(path)) return warn(name, `no database yet at ${path}`, 'the agent creates it at its first start (edge-agent run)');
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path, { readonly: true });
    const rows = await db.integrityCheck();
    if (rows.length === 1 && rows[0] === 'ok') return pass(name, `${path}: integrity_check ok`);
    return fail(
      name,
      `${path}: integrity_check found ${rows.length} problem(s): ${rows.slice(0, 3).join('; ')}`,
      'stop the agent (systemctl stop edge-agent), copy agent.db, agent.db-wal and agent.db-shm aside (pending punches are in them), then restore the database from backup',
    );
  } catch (err) {
    return fromError(name, err, 'check the data folder and its permissions');
  } finally {
    await db?.close().catch(() => undefined);
  }
}

/**
 * The data folder 0700 and the database, WAL and shared-memory files 0600: they hold employee
 * codes, punch times and templates. Checked before anything here opens the database for writing
 * (which tightens the modes itself), so what was found is what is reported.
 */
export function checkFileModes(dataDir: string): CheckResult {
  const name = 'file-modes';
  if (!existsSync(dataDir))
    return warn(name, `no data folder yet at ${dataDir}`, 'the agent creates it (0700) at its first start, or edge-agent provision does');
  const loose = looseModes(dataDir, [agentDatabasePath(dataDir)]);
  if (loose.length === 0) return pass(name, `${dataDir} is 0700, its database files 0600`);
  return fail(
    name,
    `readable by others: ${loose.map((l) => `${l.path} ${l.mode} (must be ${l.want})`).join(', ')}`,
    `chmod 700 ${dataDir}; chmod 600 ${agentDatabasePath(dataDir)}*  (the agent also tightens them when it opens the database, and logs it)`,
  );
}

export const DISK_FAIL_BYTES = 64 * 1024 * 1024;
export const DISK_WARN_BYTES = 512 * 1024 * 1024;

export async function checkDisk(dataDir: string, statfsFn: typeof statfs = statfs): Promise<CheckResult> {
  const name = 'disk';
  let dir = dataDir;
  while (!existsSync(dir) && dir !== '/') dir = dir.replace(/\/[^/]*$/, '') || '/';
  try {
    const s = await statfsFn(dir);
    const free = Number(s.bavail) * Number(s.bsize);
    const total = Number(s.blocks) * Number(s.bsize);
    const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;
    const detail = `${mb(free)} free of ${mb(total)} at ${dir}`;
    if (free < DISK_FAIL_BYTES)
      return fail(
        name,
        detail,
        'free space now: the outbox refuses punches when the disk is full (journalctl --vacuum-size=50M, remove old images)',
      );
    if (free < DISK_WARN_BYTES) return warn(name, detail, 'free some space soon (journalctl --vacuum-size=50M)');
    return pass(name, detail);
  } catch (err) {
    return fromError(name, err, `check that ${dir} exists`);
  }
}

// ---- clock and outbox --------------------------------------------------------------------

/**
 * The clock as the time authority judges it: the sources, and (with the terminal's database) the
 * latest time already trusted, the last step seen and the punches held for the clock.
 */
export async function checkClock(detect?: () => Promise<ClockState>, options: { config?: AgentConfig | null } = {}): Promise<CheckResult> {
  return (await checkClockFigures(detect, options.config ?? null)).result;
}

/** The clock check and, with the terminal's database, the figures behind it (doctor --json `clock`). */
export async function checkClockFigures(
  detect: (() => Promise<ClockState>) | undefined,
  config: AgentConfig | null,
): Promise<{ result: CheckResult; figures?: ClockFigures }> {
  const name = 'clock';
  const path = config ? agentDatabasePath(config.dataDir) : null;
  if (!config || !path || !existsSync(path)) {
    const s = await (detect ?? (() => detectClock({ sources: config ? clockSources(config.clock.sources) : DEFAULT_SOURCES })))();
    if (s.synchronized && s.source !== 'assumed') return { result: pass(name, s.detail) };
    if (s.synchronized)
      return {
        result: warn(name, s.detail, 'enable time synchronization (timedatectl set-ntp true) so the terminal can tell a wrong clock'),
      };
    return {
      result: warn(
        name,
        `${s.detail}; punches are marked and corrected once it synchronizes, nothing is lost`,
        'check NTP: timedatectl timesync-status; the terminal needs UDP port 123 to an NTP server',
      ),
    };
  }
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path);
    const clock = await clockReport(db, config, detect ? { detect: () => detect() } : {});
    const held = (await (await Outbox.open(db, { sinks: config.upstream })).status({ anchoredBoots: clock.anchoredBoots })).held;
    const alerts = clockAlerts({ held, holdAlertHours: config.outbox.unsyncedHoldHours, clockDetail: clock.detail });
    const step = clock.lastStep
      ? `last step ${clock.lastStep.sizeSec > 0 ? '+' : ''}${clock.lastStep.sizeSec} s at ${clock.lastStep.at} (${clock.steps} seen)`
      : 'no step seen';
    const heldText = `${held.clock} punch(es) held for the clock, ${held.earlierBoot} of an earlier boot waiting for a decision, ${held.review} for review`;
    const figures: ClockFigures = {
      trusted: clock.trusted,
      source: clock.source,
      lastTrustedAt: clock.lastTrustedAt,
      steps: clock.steps,
      lastStep: clock.lastStep,
      held,
      alerts,
    };
    const detail = `${clock.trusted ? 'trusted' : 'NOT TRUSTED'}: ${clock.detail}; ${heldText}; ${step}`;
    if (alerts.length)
      return {
        result: warn(name, `${detail}; ${alerts.map((a) => `${a.code}: ${a.message}`).join('; ')}`, alerts.map((a) => a.hint).join('; ')),
        figures,
      };
    if (!clock.trusted)
      return {
        result: warn(
          name,
          `${detail}; punches are marked and held until their time is corrected, nothing is lost`,
          clock.source === 'seen'
            ? 'the clock went back: check NTP (timedatectl timesync-status); punches wait until it passes the time already seen'
            : 'check NTP: timedatectl timesync-status; the terminal needs UDP port 123 to an NTP server',
        ),
        figures,
      };
    if (clock.source === 'assumed')
      return {
        result: warn(name, detail, 'enable time synchronization (timedatectl set-ntp true) so the terminal can tell a wrong clock'),
        figures,
      };
    return { result: pass(name, detail), figures };
  } catch (err) {
    return { result: fromError(name, err, 'see the database check') };
  } finally {
    await db?.close().catch(() => undefined);
  }
}

export function judgeOutbox(s: OutboxStatus): CheckResult {
  const name = 'outbox';
  const age = s.oldestPendingAgeSec;
  const detail = `${s.pending} pending${age !== null ? ` (oldest ${Math.round(age / 60)} min)` : ''}, ${s.dead} dead letter(s), ${s.delivered} delivered, ${s.unsynced} taken before clock sync`;
  if (s.pending + s.dead >= s.maxPending * 0.9)
    return fail(
      name,
      `${detail}; at ${s.maxPending} the terminal refuses new punches`,
      'restore the connection to the upstream (doctor api-token / mqtt) so the backlog drains',
    );
  if (s.dead > 0)
    return warn(
      name,
      detail,
      'dead letters were refused by the upstream: look at them with "edge-agent queue list --dead" and fix their cause',
    );
  if (age !== null && age > 3600) return warn(name, detail, 'punches are not leaving: check the api-token and mqtt checks');
  return pass(name, detail);
}

export async function checkOutbox(dataDir: string, options: { sinks?: string[]; maxPending?: number } = {}): Promise<CheckResult> {
  const path = agentDatabasePath(dataDir);
  if (!existsSync(path)) return warn('outbox', 'no database yet: no punches recorded', 'the agent creates it at its first start');
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path);
    const outbox = await Outbox.open(db, options);
    return judgeOutbox(await outbox.status());
  } catch (err) {
    return fromError('outbox', err, 'see the database check');
  } finally {
    await db?.close().catch(() => undefined);
  }
}

// ---- template key ------------------------------------------------------------------------

/** Decrypts a stored template with the key; passed in by the command (the template cache's verifyKey). */
export type TemplateKeyVerifier = (dataDir: string, key: Buffer) => Promise<{ ok: boolean; checked: number; detail?: string }>;

export async function checkTemplateKey(dataDir: string, key: Buffer | null, verify: TemplateKeyVerifier | null): Promise<CheckResult> {
  const name = 'template-key';
  if (!key)
    return fail(
      name,
      'no template key: templates cannot be stored or read',
      'run "edge-agent provision" (it generates one when none is given)',
    );
  if (!verify)
    return warn(
      name,
      'a 256-bit key is set but this build cannot open the template cache to try it',
      'this build has no drivers for it: reinstall edge-agent from its release',
    );
  if (!existsSync(agentDatabasePath(dataDir)))
    return warn(name, 'a 256-bit key is set; no database yet to try it on', 'the agent creates the database at its first start');
  try {
    const r = await verify(dataDir, key);
    if (r.ok)
      return pass(
        name,
        r.checked
          ? `the key decrypts the stored templates (${r.checked} tried)`
          : 'a valid 256-bit key; no templates stored yet to try it on',
      );
    return fail(
      name,
      r.detail ?? 'the key does not decrypt the stored templates',
      'the secrets file holds another key than the one the templates were stored with: restore the right templateKey, or re-sync templates from the site',
    );
  } catch (err) {
    return fromError(name, err, 'see the database check');
  }
}

// ---- all of it ---------------------------------------------------------------------------

export interface DoctorOptions {
  config: LoadConfigOptions;
  /** Where the rule found the config (`locateConfig`): none found is a failed config check naming where it looked. */
  location?: ConfigLocation;
  /** Override the secrets file (default: from the config). */
  secretsFile?: string;
  credentialsDir?: string | null;
  probeScanner?: ScannerProbe | null;
  verifyTemplateKey?: TemplateKeyVerifier | null;
  daemonRunning?: (dataDir: string) => Promise<boolean>;
  /** The scanners as the running agent reports them (null when it cannot say). */
  heldScanners?: (dataDir: string) => Promise<HeldScanner[] | null>;
  detectClock?: () => Promise<ClockState>;
  timeoutMs?: number;
}

/**
 * The extraction models load and work: one synthetic fingerprint goes through the whole image
 * path (ONNX enhancement included). Only needed where scanners give images.
 */
export async function checkModels(needed: boolean): Promise<CheckResult> {
  if (!needed) return warn('models', 'not checked: no scanner is configured', 'nothing to do until scanners are added');
  try {
    const { createImageExtractor } = await import('../biometrics/extract/extractor.js');
    const { renderFingerImage } = await import('../synthetic/finger-image.js');
    const extractor = await createImageExtractor({ worker: false });
    try {
      const t0 = performance.now();
      const r = await extractor.extract('finger', { ...renderFingerImage(1, 1), dpi: 500 });
      const ms = Math.round(performance.now() - t0);
      return pass(
        'models',
        `extraction models load and work (a synthetic fingerprint: ${r.data.length}-byte template, quality ${r.quality}, ${ms} ms)`,
      );
    } finally {
      await extractor.close();
    }
  } catch (err) {
    return fromError('models', err, 'reinstall the agent (the models/ folder ships with it) or run "npm run models" in a checkout');
  }
}

/** Whether the terminal holds a key that signs MQTT commands (and where it is), when it takes commands at all. */
export function checkOpsKey(config: AgentConfig, secrets: Pick<Secrets, 'opsKey' | 'opsKeys' | 'sources'> | null): CheckResult {
  if (!config.mqtt.url || !config.ops.enabled)
    return pass(
      'ops-key',
      `not needed: this terminal takes no commands over MQTT (${config.mqtt.url ? 'ops.enabled is false' : 'no mqtt.url'})`,
    );
  if (!secrets) return warn('ops-key', 'not checked: the secrets could not be read', 'fix the secrets first (see the secrets check)');
  const operators = Object.keys(secrets.opsKeys).sort();
  if (!secrets.opsKey && operators.length === 0) {
    return warn(
      'ops-key',
      'no ops key (opsKey or opsKeys in the secrets): every command over MQTT (ping, delete-user, restart, ...) is refused with OPS_UNAUTHENTICATED',
      'run "edge-agent provision --ops-key-file FILE" with the site\'s key from central operations, or --generate-ops-key',
    );
  }
  const held = [
    ...(secrets.opsKey ? [`opsKey (key id site) from ${secrets.sources.opsKey ?? 'the secrets'}`] : []),
    ...(operators.length ? [`opsKeys ${operators.join(', ')} from ${secrets.sources.opsKeys ?? 'the secrets'}`] : []),
  ];
  return pass(
    'ops-key',
    `commands over MQTT must be signed: ${held.join('; ')}; signatures are accepted within ±${config.ops.authWindowSec} s of this terminal's clock`,
  );
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const checks: CheckResult[] = [];
  const { result, config } = checkConfig(options.config, options.location);
  checks.push(result);
  if (!config) {
    const why = options.location && !options.location.file ? 'there is no config' : 'the config is not valid';
    for (const n of ['secrets', 'api-token', 'mqtt', 'ops-key', 'scanners', 'template-key', 'database', 'file-modes', 'outbox'])
      checks.push(warn(n, `not checked: ${why}`, 'fix the config first (see the config check)'));
    checks.push(await checkClock(options.detectClock));
    return { ok: false, checks };
  }
  const sec = checkSecrets(config, {
    ...(options.secretsFile ? { file: options.secretsFile } : {}),
    credentialsDir: options.credentialsDir,
  });
  checks.push(sec.result);
  const secrets = sec.secrets;
  const timeoutMs = options.timeoutMs ?? Math.min(config.api.timeoutMs, 10_000);
  const [api, broker] = await Promise.all([
    checkApiToken({
      url: config.api.url,
      pathForm: config.api.pathForm,
      clientId: config.api.clientId,
      timeoutMs,
      apiKey: secrets?.apiKey ?? null,
      apiSecret: secrets?.apiSecret ?? null,
      required: config.upstream.includes('api'),
    }),
    checkMqttConnection({
      config,
      secrets: { mqttUsername: secrets?.mqttUsername ?? null, mqttPassword: secrets?.mqttPassword ?? null },
      timeoutMs,
    }),
  ]);
  checks.push(api, broker, checkOpsKey(config, secrets));
  const running = options.daemonRunning ? await options.daemonRunning(config.dataDir) : false;
  const held = running && options.heldScanners ? await options.heldScanners(config.dataDir).catch(() => null) : null;
  checks.push(
    ...(await checkScanners(config.scanners, options.probeScanner ?? null, { simulate: config.simulate, daemonRunning: running, held })),
  );
  checks.push(await checkTemplateKey(config.dataDir, secrets?.templateKey ?? null, options.verifyTemplateKey ?? null));
  checks.push(await checkModels(config.scanners.length > 0 || config.simulate));
  checks.push(await checkDatabase(config.dataDir));
  checks.push(checkFileModes(config.dataDir));
  checks.push(await checkDisk(config.dataDir));
  const clock = await checkClockFigures(options.detectClock, config);
  checks.push(clock.result);
  checks.push(await checkOutbox(config.dataDir, { sinks: config.upstream, maxPending: config.outbox.maxPending }));
  return { ok: checks.every((c) => c.status !== 'fail'), checks, ...(clock.figures ? { clock: clock.figures } : {}) };
}

/** The report for a person: one line a check, the hint under each warn and fail. */
export function formatReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const lines: string[] = [];
  for (const c of report.checks) {
    lines.push(`${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.hint && c.status !== 'pass') lines.push(`${' '.repeat(width + 8)}→ ${c.hint}`);
  }
  const fails = report.checks.filter((c) => c.status === 'fail').length;
  const warns = report.checks.filter((c) => c.status === 'warn').length;
  lines.push('', report.ok ? `healthy${warns ? ` (${warns} warning${warns > 1 ? 's' : ''})` : ''}` : `${fails} check(s) failed`);
  return `${lines.join('\n')}\n`;
}
