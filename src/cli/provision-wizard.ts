/**
 * The interactive `edge-agent provision`: one small function per question, defaults from the
 * existing setup (so a second run is an edit), each connection and each scanner checked right
 * after it is given, with the choice to try again or stop: a setup whose check failed is never
 * written (--no-check skips the checks). Nothing is written before the technician confirms the
 * summary. Secrets (API secret, MQTT password, site key) are typed hidden and never shown back.
 *
 * Tested in test/integration/provision-wizard.test.ts (the questions on a real pty, checks,
 * retries, secrets hidden, nothing written when stopped).
 */
import { dirname, join } from 'node:path';
import { checkbox, confirm, input, password, select } from '@inquirer/prompts';
import { isTimeZone, parseConfig, type AgentConfig, type ScannerConfig } from '../config/config.js';
import { checkApiToken } from '../setup/doctor/api.js';
import type { CheckResult } from '../setup/doctor/check.js';
import { checkMqttConnection } from '../setup/doctor/mqtt.js';
import { checkScanners } from '../setup/doctor/scanners.js';
import {
  formatSummary,
  mergeSetup,
  parseScannerSpec,
  readExisting,
  readKeyFile,
  refuseForeignTemplateKey,
  summarize,
  writeSetup,
  type ExistingSetup,
  type ProvisionAnswers,
} from '../setup/provision.js';
import { discoverScanners, scannerProbe } from '../setup/scanner-probe.js';
import { describeError } from '../core/errors.js';
import { parseKey } from '../config/secrets.js';

const say = (text: string) => process.stdout.write(`${text}\n`);

function current(existing: ExistingSetup): AgentConfig | null {
  try {
    return parseConfig(existing.raw, 'the existing config');
  } catch (err) {
    say(`The existing config is not valid (${describeError(err).split('\n')[0]}); its values are offered where they can be.`);
    return null;
  }
}

function showCheck(c: CheckResult): void {
  say(`  ${c.status === 'pass' ? 'ok' : c.status}: ${c.detail}${c.hint && c.status !== 'pass' ? `\n  hint: ${c.hint}` : ''}`);
}

/** The technician chose to stop: nothing is written. */
class StopWizard extends Error {
  override readonly name = 'StopWizard';
}

/**
 * Asks again until the check passes, or stops without writing: a setup whose check failed is
 * never written (as with --non-interactive; --no-check skips the checks for a bench offline).
 */
async function untilChecked(what: string, check: () => Promise<CheckResult>, retry: () => Promise<void>, checking: boolean): Promise<void> {
  if (!checking) {
    say(`Not checking ${what} (--no-check).`);
    return;
  }
  for (;;) {
    say(`Checking ${what}...`);
    const c = await check();
    showCheck(c);
    if (c.status !== 'fail') return;
    const next = await select({
      message: `${what} failed. What now?`,
      choices: [
        { name: 'Type it again', value: 'retry' },
        { name: 'Stop without writing anything (fix it, then run provision again)', value: 'stop' },
      ],
    });
    if (next === 'stop') throw new StopWizard();
    await retry();
  }
}

async function askTerminal(a: ProvisionAnswers, c: AgentConfig | null): Promise<void> {
  a.terminalId = await input({
    message: 'Terminal id',
    default: c?.terminal.id ?? 'gate-1',
    validate: (v) => /^[A-Za-z0-9._-]{1,64}$/.test(v) || 'letters, digits, dot, dash or underscore',
  });
  a.site = await input({
    message: 'Site',
    default: c?.terminal.site ?? 'site-1',
    validate: (v) => /^[A-Za-z0-9._-]{1,64}$/.test(v) || 'letters, digits, dot, dash or underscore',
  });
  a.timeZone = await input({
    message: 'Time zone (IANA)',
    default: c?.terminal.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    validate: (v) => isTimeZone(v) || 'an IANA zone such as Europe/Berlin',
  });
  a.mode = await select({
    message: 'Terminal mode',
    default: c?.terminal.mode ?? 'toggle',
    choices: [
      { value: 'toggle', name: 'toggle (in, then out)' },
      { value: 'in', name: 'in only' },
      { value: 'out', name: 'out only' },
    ],
  });
  a.dataDir = await input({ message: 'Data folder', default: c?.dataDir ?? '/var/lib/edge-agent' });
}

async function askApi(a: ProvisionAnswers, c: AgentConfig | null, e: ExistingSetup, checking: boolean): Promise<void> {
  const url = await input({
    message: 'Attendance API URL (empty for none)',
    default: c?.api.url ?? '',
    validate: (v) => !v || /^https?:\/\/.+/.test(v) || 'an http:// or https:// URL',
  });
  a.apiUrl = url || null;
  if (!url) return;
  a.pathForm = await select({
    message: 'API path form',
    default: c?.api.pathForm ?? 'api',
    choices: [
      { value: 'api', name: '/api/attendance/...' },
      { value: 'attendance', name: '/attendance/api/...' },
    ],
  });
  a.clientId = await input({ message: 'OAuth2 client id', default: c?.api.clientId ?? 'edge-agent' });
  const askKeys = async () => {
    a.apiKey = await input({ message: 'API key', default: a.apiKey ?? e.secrets.apiKey ?? '', validate: (v) => !!v || 'required' });
    const secret = await password({ message: `API secret${e.secrets.apiSecret ? ' (empty keeps the current one)' : ''}`, mask: '*' });
    if (secret) a.apiSecret = secret;
  };
  await askKeys();
  await untilChecked(
    'the API key (fetching a token)',
    () =>
      checkApiToken({
        url,
        pathForm: a.pathForm as AgentConfig['api']['pathForm'],
        clientId: a.clientId!,
        timeoutMs: 10_000,
        apiKey: a.apiKey ?? null,
        apiSecret: a.apiSecret ?? e.secrets.apiSecret,
      }),
    askKeys,
    checking,
  );
}

async function askMqtt(a: ProvisionAnswers, c: AgentConfig | null, e: ExistingSetup, checking: boolean): Promise<void> {
  const askAll = async () => {
    const url = await input({
      message: 'MQTT broker URL (empty for none)',
      default: c?.mqtt.url ?? '',
      validate: (v) => !v || /^(mqtts?|wss?|tcp|ssl):\/\/.+/.test(v) || 'an mqtt://, mqtts://, ws:// or wss:// URL',
    });
    a.mqttUrl = url || null;
    if (!url) return;
    a.mqttUsername = (await input({ message: 'MQTT username (empty for none)', default: c?.mqtt.username ?? '' })) || null;
    const pw = await password({
      message: `MQTT password${e.secrets.mqttPassword ? ' (empty keeps the current one)' : ' (empty for none)'}`,
      mask: '*',
    });
    if (pw) a.mqttPassword = pw;
    if (url.startsWith('mqtts') || url.startsWith('wss') || url.startsWith('ssl')) {
      a.tlsCa = (await input({ message: 'CA certificate file (empty: system CAs)', default: c?.mqtt.tls.ca ?? '' })) || null;
      a.tlsCert = (await input({ message: 'Client certificate file (empty for none)', default: c?.mqtt.tls.cert ?? '' })) || null;
      a.tlsKey = a.tlsCert ? (await input({ message: 'Client key file', default: c?.mqtt.tls.key ?? '' })) || null : null;
    }
  };
  await askAll();
  if (!a.mqttUrl) return;
  await untilChecked(
    'the MQTT broker (connecting)',
    async () => {
      const probe = parseConfig({
        terminal: { id: a.terminalId },
        mqtt: {
          url: a.mqttUrl,
          username: a.mqttUsername ?? null,
          tls: { ca: a.tlsCa ?? null, cert: a.tlsCert ?? null, key: a.tlsKey ?? null },
        },
      });
      return checkMqttConnection({
        config: probe,
        secrets: { mqttUsername: null, mqttPassword: a.mqttPassword ?? e.secrets.mqttPassword },
        timeoutMs: 10_000,
      });
    },
    askAll,
    checking,
  );
}

/** The site's ops key: without one the terminal refuses every command over MQTT. */
async function askOpsKey(a: ProvisionAnswers, e: ExistingSetup): Promise<void> {
  const has = !!e.secrets.opsKey;
  const choice = await select({
    message: 'Ops key (central operations sign MQTT commands to this terminal with it)',
    default: has ? 'keep' : 'file',
    choices: [
      ...(has ? [{ value: 'keep', name: 'keep the current one' }] : []),
      { value: 'file', name: "read the site's ops key from a file (from central operations)" },
      { value: 'generate', name: 'generate a new one (central operations then take it from the secrets file)' },
      { value: 'none', name: has ? 'remove it (every MQTT command is then refused)' : 'none for now (every MQTT command is refused)' },
    ],
  });
  if (choice === 'generate') a.generateOpsKey = true;
  else if (choice === 'none' && has) a.opsKey = null;
  else if (choice === 'file') {
    const file = await input({
      message: 'File holding the ops key (64 hex characters)',
      validate: (v) => {
        try {
          readKeyFile(v, 'the ops key file', 'opsKey');
          return true;
        } catch (err) {
          return describeError(err).split('\n')[0]!;
        }
      },
    });
    a.opsKey = readKeyFile(file, 'the ops key file', 'opsKey');
  }
}

/**
 * The site key: every terminal of a site shares it to exchange enrolled templates over the broker
 * (encrypted). Asked only with a broker; hidden as it is typed, never shown back.
 */
async function askSiteKey(a: ProvisionAnswers, e: ExistingSetup): Promise<void> {
  if (!a.mqttUrl) return;
  const keep = e.secrets.siteKey ? 'empty keeps the current one' : 'empty: none, enrolled templates stay on this terminal';
  const typed = await password({
    message: `Site key for template sync, the same on every terminal of the site (64 hex characters; ${keep})`,
    mask: '*',
    validate: (v) => {
      if (!v) return true;
      try {
        parseKey(v, 'siteKey');
        return true;
      } catch (err) {
        return describeError(err).split('\n')[0]!;
      }
    },
  });
  if (typed) a.siteKey = parseKey(typed, 'siteKey');
  else if (!e.secrets.siteKey)
    say(
      "  No site key: templates enrolled here stay here (the first terminal of a site can make one: node -e \"console.log(require('crypto').randomBytes(32).toString('hex'))\").",
    );
}

async function askScanners(a: ProvisionAnswers, c: AgentConfig | null, checking: boolean): Promise<void> {
  await chooseScanners(a, c?.scanners ?? []);
  if (!checking || !a.scanners?.length) return;
  for (;;) {
    say('Checking the scanners...');
    const results = await checkScanners(a.scanners, scannerProbe);
    for (const r of results) showCheck(r);
    if (!results.some((r) => r.status === 'fail')) return;
    const next = await select({
      message: 'A scanner did not answer. What now?',
      choices: [
        { name: 'Check again (after fixing the cable, the power or the module)', value: 'again' },
        { name: 'Change the scanners (path, family, baud rate)', value: 'change' },
        { name: 'Stop without writing anything', value: 'stop' },
      ],
    });
    if (next === 'stop') throw new StopWizard();
    if (next === 'change') await chooseScanners(a, a.scanners, false);
  }
}

async function chooseScanners(a: ProvisionAnswers, existing: ScannerConfig[], offerSearch = true): Promise<void> {
  let found: ScannerConfig[] = [];
  if (offerSearch && (await confirm({ message: 'Search for attached scanners now? (a few seconds)', default: true }))) {
    say('Searching serial ports and HID devices...');
    found = await discoverScanners();
    say(found.length ? `Found ${found.length}.` : 'Nothing answered. Check cables and power, or add a scanner by hand.');
  }
  const all = [...existing, ...found.filter((f) => !existing.some((x) => x.path === f.path))];
  const label = (s: ScannerConfig) => `${s.family} at ${s.path}${s.baud ? ` (${s.baud} baud)` : ''}`;
  let chosen: ScannerConfig[] = all.length
    ? await checkbox({ message: 'Scanners this terminal uses', choices: all.map((s) => ({ name: label(s), value: s, checked: true })) })
    : [];
  for (;;) {
    const spec = await input({
      message: 'Add a scanner by hand as family:path[:baud] (empty when done)',
      default: '',
      validate: (v) => {
        if (!v) return true;
        try {
          parseScannerSpec(v);
          return true;
        } catch (err) {
          return describeError(err).split('\n')[0]!;
        }
      },
    });
    if (!spec) break;
    chosen = [...chosen, parseScannerSpec(spec)];
  }
  a.scanners = chosen;
}

export async function runWizard(values: { config?: string; secrets?: string; check?: boolean }): Promise<number> {
  try {
    return await wizard(values, values.check !== false);
  } catch (err) {
    if (!(err instanceof StopWizard)) throw err;
    say('Stopped: nothing written.');
    return 1;
  }
}

async function wizard(values: { config?: string; secrets?: string }, checking: boolean): Promise<number> {
  say('edge-agent provisioning. Enter accepts the value in brackets; Ctrl-C stops without writing anything.');
  const configFile = await input({ message: 'Config file', default: values.config ?? '/etc/edge-agent/config.yaml' });
  const secretsFile = await input({
    message: 'Secrets file (mode 0600)',
    default: values.secrets ?? join(dirname(configFile), 'secrets.yaml'),
  });
  const existing = readExisting(configFile, secretsFile);
  if (existing.exists) say(`Editing the existing setup in ${configFile}: what you do not change is kept.`);
  const c = current(existing);
  const a: ProvisionAnswers = {};
  await askTerminal(a, c);
  await askApi(a, c, existing, checking);
  await askMqtt(a, c, existing, checking);
  await askSiteKey(a, existing);
  if (a.mqttUrl) await askOpsKey(a, existing);
  await askScanners(a, c, checking);
  const merged = mergeSetup(existing, a, { secretsFile, configFile });
  await refuseForeignTemplateKey(merged, existing);
  say(`\n${formatSummary(summarize(merged.config, merged.secrets, { config: configFile, secrets: secretsFile }))}`);
  if (merged.generatedTemplateKey) say('  (a new template key was generated)');
  if (merged.generatedOpsKey) say(`  (a new ops key was generated: opsKey in ${secretsFile}; give it to central operations)`);
  if (!(await confirm({ message: 'Write these files?', default: true }))) {
    say('Nothing written.');
    return 1;
  }
  writeSetup(configFile, secretsFile, merged);
  say(`Written (configVersion ${merged.config.configVersion}). Next: edge-agent doctor, then systemctl enable --now edge-agent`);
  return 0;
}
