/**
 * Tested in test/integration/provision-cli.test.ts (flags, --discover-port),
 * test/integration/provision-wizard.test.ts (interactive) and
 * test/integration/provision-e2e.test.ts.
 */
import type { Command } from 'commander';
import { action, defineCommand, printJson, repeatable, usageError, withJson } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import type { ProvisionAnswers } from '../../setup/provision.js';

type Values = CommonValues & {
  'non-interactive'?: boolean;
  timezone?: string;
  scanner?: string[];
  discover?: boolean;
  'discover-port'?: string;
  'api-key-file'?: string;
  'mqtt-username'?: string;
  'mqtt-password-file'?: string;
  'tls-ca'?: string;
  'tls-cert'?: string;
  'tls-key'?: string;
  'template-key-file'?: string;
  'site-key-file'?: string;
  'ops-key-file'?: string;
  'generate-ops-key'?: boolean;
  'operator-key'?: string[];
  /** False with --no-check. */
  check?: boolean;
  json?: boolean;
};

/** The answers the flags give; a flag not given keeps what the existing setup has. */
export function answersFromFlags(v: Values, setup: typeof import('../../setup/provision.js')): ProvisionAnswers {
  const { isOperatorKeyId, parseScannerSpec, readKeyFile, readSecretFile } = setup;
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
  if (v.upstream !== undefined)
    a.upstream = v.upstream
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (v.scanner !== undefined) a.scanners = v.scanner.map(parseScannerSpec);
  if (v['api-key'] !== undefined) a.apiKey = v['api-key'];
  if (v['api-key-file'] !== undefined) a.apiKey = readSecretFile(v['api-key-file'], '--api-key-file');
  if (v['api-secret-file'] !== undefined) a.apiSecret = readSecretFile(v['api-secret-file'], '--api-secret-file');
  if (v['mqtt-password-file'] !== undefined) a.mqttPassword = readSecretFile(v['mqtt-password-file'], '--mqtt-password-file');
  if (v['template-key-file'] !== undefined) a.templateKey = readKeyFile(v['template-key-file'], '--template-key-file', 'templateKey');
  if (v['site-key-file'] !== undefined) a.siteKey = readKeyFile(v['site-key-file'], '--site-key-file', 'siteKey');
  if (v['ops-key-file'] !== undefined) a.opsKey = readKeyFile(v['ops-key-file'], '--ops-key-file', 'opsKey');
  if (v['generate-ops-key']) {
    if (v['ops-key-file'] !== undefined) throw usageError('provision', 'give --ops-key-file or --generate-ops-key, not both');
    a.generateOpsKey = true;
  }
  for (const spec of v['operator-key'] ?? []) {
    const m = /^([^=]+)=(.+)$/.exec(spec);
    if (!m || !isOperatorKeyId(m[1]!))
      throw usageError('provision', `--operator-key ${spec}: write ID=FILE, the id letters, digits, dot, dash or underscore (not "site")`, {
        value: spec,
      });
    a.operatorKeys = { ...a.operatorKeys, [m[1]!]: readKeyFile(m[2]!, '--operator-key', `opsKeys.${m[1]!}`) };
  }
  return a;
}

/** The secrets file an existing config names (`secretsFile`, relative to its folder), or null. */
async function secretsFileOf(configFile: string): Promise<string | null> {
  const { existsSync } = await import('node:fs');
  if (!existsSync(configFile)) return null;
  const { dirname, resolve } = await import('node:path');
  const { readConfigFile } = await import('../../config/load.js');
  const named = readConfigFile(configFile).secretsFile;
  return typeof named === 'string' && named !== '' ? resolve(dirname(resolve(configFile)), named) : null;
}

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'provision',
    summary: 'set up this terminal: config, secrets, checks (interactive or --non-interactive)',
    audience: 'technician',
    details: `Sets up this terminal: writes the config (no secrets) and the 0600 secrets file, atomically,
after checking the API key (fetches a token), the MQTT broker (connects) and the scanners.
Run again to change a setup: what is not given is kept; configVersion goes up by one.
Without --non-interactive it asks, step by step (needs a terminal). --api none and --mqtt none
remove an upstream.`,
  })
    .option(
      '--non-interactive',
      'take everything from the flags (for scripts); needs --config and --secrets the first time, a re-run keeps both',
    )
    .option('--timezone <zone>', 'IANA time zone of the terminal, e.g. Europe/Berlin')
    .addOption(repeatable('--scanner <family:path[:baud]>', 'repeatable, replaces the scanner list (e.g. r30x:/dev/fingerprint0:57600)'))
    .option('--discover', 'add the scanners found by discovery (every serial port and HID device)')
    .option('--discover-port <path>', 'discovery on this port only (family and baud found by probing)')
    .option('--api-key-file <file>', 'file holding the API key (instead of --api-key)')
    .option('--mqtt-username <user>', 'MQTT user name')
    .option('--mqtt-password-file <file>', 'file holding the MQTT password')
    .option('--tls-ca <file>', 'CA certificate of the broker (PEM)')
    .option('--tls-cert <file>', 'client certificate for the broker (PEM)')
    .option('--tls-key <file>', 'client key for the broker (PEM)')
    .option('--template-key-file <file>', '32-byte key (64 hex); one is generated when the setup has none')
    .option('--site-key-file <file>', "the site's key for template sync")
    .option('--ops-key-file <file>', "the site's ops key (opsKey): commands over MQTT signed with it are accepted")
    .option('--generate-ops-key', 'generate a new ops key into the secrets file (give it to central operations)')
    .addOption(repeatable('--operator-key <id=file>', "an operator's ops key (opsKeys.<id>, repeatable)"))
    .option('--no-check', 'write without checking API, MQTT and scanners (offline bench setup)');
  withJson(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    const setup = await import('../../setup/provision.js');
    const { formatSummary, provision, summarize } = setup;
    if (!values['non-interactive']) {
      if (!process.stdin.isTTY) {
        throw new (await import('../../core/errors.js')).AgentError(
          'CLI_USAGE',
          'provision asks questions but stdin is not a terminal',
          {},
          {
            hint: 'run it in a terminal, or give everything as flags: edge-agent provision --non-interactive --config FILE --secrets FILE --terminal ID --api URL ... (edge-agent help provision)',
          },
        );
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
    // A re-run keeps what it is not given: the config this terminal has, and the secrets file that
    // config names (provision writes secretsFile into it).
    const { existsSync } = await import('node:fs');
    const { installedConfigPath } = await import('../../config/locate.js');
    const configFile = values.config ?? (existsSync(installedConfigPath()) ? installedConfigPath() : undefined);
    if (!configFile)
      throw usageError(
        'provision',
        `--non-interactive needs --config FILE (where to write the config; ${installedConfigPath()} does not exist yet)`,
      );
    const secretsFile = values.secrets ?? (await secretsFileOf(configFile));
    if (!secretsFile)
      throw usageError('provision', `--non-interactive needs --secrets FILE (${configFile} does not exist yet or names no secrets file)`);
    const files = { config: configFile, secrets: secretsFile };
    const { merged, checks } = await provision(files, answersFromFlags(values, setup), {
      check: values.check !== false,
      discover: values['discover-port'] ? { port: values['discover-port'] } : (values.discover ?? false),
    });
    const rows = summarize(merged.config, merged.secrets, files);
    if (values.json) {
      printJson({
        ok: true,
        configVersion: merged.config.configVersion,
        config: files.config,
        secrets: files.secrets,
        changed: merged.changed,
        generatedTemplateKey: merged.generatedTemplateKey,
        generatedOpsKey: merged.generatedOpsKey,
        checks,
        summary: Object.fromEntries(rows),
      });
    } else {
      const lines = [`provisioned ${merged.config.terminal.id} (configVersion ${merged.config.configVersion})`, formatSummary(rows)];
      if (checks.length) lines.push('checks:', ...checks.map((c) => `  ${c.status.toUpperCase().padEnd(4)}  ${c.name}: ${c.detail}`));
      else lines.push('checks: not run (--no-check)');
      lines.push(
        `changed: ${merged.changed.length ? merged.changed.join(', ') : 'nothing'}${merged.generatedTemplateKey ? ' (a new template key was generated)' : ''}`,
      );
      if (merged.generatedOpsKey)
        lines.push(
          `a new ops key was generated: it is opsKey in ${files.secrets}; central operations sign commands with it (edge-agent ops send --key-file FILE holding it)`,
        );
      lines.push('next: edge-agent doctor, then systemctl enable --now edge-agent');
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return 0;
  });
}
