import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { COMMON_FLAGS } from '../../config/config.js';
import { formatSummary, parseScannerSpec, provision, readKeyFile, readSecretFile, summarize, type ProvisionAnswers } from '../../setup/provision.js';

const usage = `usage: edge-agent provision [--non-interactive --config FILE --secrets FILE] [options]
  Sets up this terminal: writes the config (no secrets) and the 0600 secrets file, atomically,
  after checking the API key (fetches a token), the MQTT broker (connects) and the scanners.
  Run again to change a setup: what is not given is kept; configVersion goes up by one.
  Without --non-interactive it asks, step by step (needs a terminal).

  --non-interactive        take everything from the flags (for scripts); needs --config and --secrets
  --config FILE            the config file to write (default /etc/edge-agent/config.yaml when asked)
  --secrets FILE           the secrets file to write (mode 0600)
  --data DIR               data folder (database)
  --terminal ID  --site S  --mode in|out|toggle  --timezone ZONE (IANA, e.g. Europe/Berlin)
  --api URL  --path-form api|attendance  --client-id ID
  --api-key K | --api-key-file FILE    --api-secret-file FILE
  --mqtt URL  --mqtt-username U  --mqtt-password-file FILE
  --tls-ca FILE  --tls-cert FILE  --tls-key FILE
  --upstream api|mqtt|api,mqtt   (default: every upstream with a URL)
  --scanner family:path[:baud]   repeatable, replaces the scanner list (e.g. r30x:/dev/fingerprint0:57600)
  --discover                     add the scanners found by discovery (every serial port and HID device)
  --discover-port PATH           discovery on this port only (family and baud found by probing)
  --template-key-file FILE       32-byte key (64 hex); one is generated when the setup has none
  --site-key-file FILE           the site's key for template sync
  --no-check                     write without checking API, MQTT and scanners (offline bench setup)
  --json                         print the result as JSON`;

const FLAGS = {
  ...COMMON_FLAGS,
  'non-interactive': { type: 'boolean' },
  timezone: { type: 'string' },
  scanner: { type: 'string', multiple: true },
  discover: { type: 'boolean' },
  'discover-port': { type: 'string' },
  'api-key-file': { type: 'string' },
  'mqtt-username': { type: 'string' },
  'mqtt-password-file': { type: 'string' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'template-key-file': { type: 'string' },
  'site-key-file': { type: 'string' },
  'no-check': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof FLAGS>>['values'];

/** The answers the flags give; a flag not given keeps what the existing setup has. */
export function answersFromFlags(v: Values): ProvisionAnswers {
  const a: ProvisionAnswers = {};
  if (v.terminal !== undefined) a.terminalId = v.terminal;
  if (v.site !== undefined) a.site = v.site;
  if (v.timezone !== undefined) a.timeZone = v.timezone;
  if (v.mode !== undefined) a.mode = v.mode;
  if (v.data !== undefined) a.dataDir = v.data;
  if (v.api !== undefined) a.apiUrl = v.api === 'none' ? null : v.api;
  if (v['path-form'] !== undefined) a.pathForm = v['path-form'];
  if (v['client-id'] !== undefined) a.clientId = v['client-id'];
  if (v.mqtt !== undefined) a.mqttUrl = v.mqtt === 'none' ? null : v.mqtt;
  if (v['mqtt-username'] !== undefined) a.mqttUsername = v['mqtt-username'] || null;
  if (v['tls-ca'] !== undefined) a.tlsCa = v['tls-ca'] || null;
  if (v['tls-cert'] !== undefined) a.tlsCert = v['tls-cert'] || null;
  if (v['tls-key'] !== undefined) a.tlsKey = v['tls-key'] || null;
  if (v.upstream !== undefined) a.upstream = v.upstream.split(',').map((s) => s.trim()).filter(Boolean);
  if (v.scanner !== undefined) a.scanners = v.scanner.map(parseScannerSpec);
  if (v['api-key'] !== undefined) a.apiKey = v['api-key'];
  if (v['api-key-file'] !== undefined) a.apiKey = readSecretFile(v['api-key-file'], '--api-key-file');
  if (v['api-secret-file'] !== undefined) a.apiSecret = readSecretFile(v['api-secret-file'], '--api-secret-file');
  if (v['mqtt-password-file'] !== undefined) a.mqttPassword = readSecretFile(v['mqtt-password-file'], '--mqtt-password-file');
  if (v['template-key-file'] !== undefined) a.templateKey = readKeyFile(v['template-key-file'], '--template-key-file', 'templateKey');
  if (v['site-key-file'] !== undefined) a.siteKey = readKeyFile(v['site-key-file'], '--site-key-file', 'siteKey');
  return a;
}

const command: Command = {
  summary: 'set up this terminal: config, secrets, checks (interactive or --non-interactive)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs(argv, FLAGS, usage, false);
    if (!values['non-interactive']) {
      if (!process.stdin.isTTY) {
        throw new AgentError('CLI_USAGE', 'provision asks questions but stdin is not a terminal', {}, {
          hint: 'run it in a terminal, or give everything as flags: edge-agent provision --non-interactive --config FILE --secrets FILE --terminal ID --api URL ... (edge-agent help provision)',
        });
      }
      const { runWizard } = await import('../provision-wizard.js');
      try {
        return await runWizard(values);
      } catch (err) {
        // Ctrl-C inside a prompt: nothing has been written yet.
        if ((err as Error).name === 'ExitPromptError') {
          process.stdout.write('\nstopped: nothing written\n');
          return 130;
        }
        throw err;
      }
    }
    if (!values.config || !values.secrets) {
      throw new AgentError('CLI_USAGE', `--non-interactive needs ${!values.config ? '--config FILE' : '--secrets FILE'}`, {}, { hint: 'edge-agent provision --non-interactive --config /etc/edge-agent/config.yaml --secrets /etc/edge-agent/secrets.yaml ...' });
    }
    const files = { config: values.config, secrets: values.secrets };
    const { merged, checks } = await provision(files, answersFromFlags(values), { check: !values['no-check'], discover: values['discover-port'] ? { port: values['discover-port'] } : (values.discover ?? false) });
    const rows = summarize(merged.config, merged.secrets, files);
    if (values.json) {
      printJson({ ok: true, configVersion: merged.config.configVersion, config: files.config, secrets: files.secrets, changed: merged.changed, generatedTemplateKey: merged.generatedTemplateKey, checks, summary: Object.fromEntries(rows) });
    } else {
      const lines = [`provisioned ${merged.config.terminal.id} (configVersion ${merged.config.configVersion})`, formatSummary(rows)];
      if (checks.length) lines.push('checks:', ...checks.map((c) => `  ${c.status.toUpperCase().padEnd(4)}  ${c.name}: ${c.detail}`));
      else lines.push('checks: not run (--no-check)');
      lines.push(`changed: ${merged.changed.length ? merged.changed.join(', ') : 'nothing'}${merged.generatedTemplateKey ? ' (a new template key was generated)' : ''}`);
      lines.push('next: edge-agent doctor, then systemctl enable --now edge-agent');
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return 0;
  },
};
export default command;
