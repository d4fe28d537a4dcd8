/**
 * Tested in test/unit/cli/commands/ops.test.ts (ops send --arg),
 * test/integration/agent-mqtt-abuse.test.ts and test/integration/provision-e2e.test.ts.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { action, defineCommand, missingFlag, printJson, repeatable, usageError, withJson, withVerbs } from '../command.js';
import type { CommonValues } from '../common-options.js';
import { err, out } from '../output.js';

type SendValues = Pick<CommonValues, 'config' | 'data' | 'secrets' | 'mqtt' | 'site' | 'terminal'> & {
  prefix?: string;
  arg?: string[];
  'key-id'?: string;
  'key-file'?: string;
  timeout?: string;
  json?: boolean;
};

/** `--arg k=v` (a string) and `--arg k:=JSON` (any JSON value) as one arguments object. */
export function parseArgs(list: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of list) {
    const m = /^([A-Za-z][A-Za-z0-9_-]{0,63})(:?=)([\s\S]*)$/.exec(item);
    if (!m)
      throw usageError('ops send', `--arg ${item.slice(0, 80)}: write name=value (a string) or name:=JSON`, { arg: item.slice(0, 80) });
    const [, name, op, raw] = m as unknown as [string, string, string, string];
    if (name === 'transaction' || name === 'auth') throw usageError('ops send', `--arg ${name}: ops send sets "${name}" itself`);
    if (op === '=') out[name] = raw;
    else {
      try {
        out[name] = JSON.parse(raw) as unknown;
      } catch {
        throw usageError('ops send', `--arg ${name}:=${raw.slice(0, 60)} is not JSON`, { arg: name });
      }
    }
  }
  return out;
}

export default function register(program: Command): Command {
  const ops = defineCommand(program, {
    name: 'ops',
    summary: 'send a signed command to a terminal over MQTT and print its answer',
    audience: 'operations',
    details:
      'Commands on <prefix>/<site>/<terminal>/req/<command> run only when signed with an ops key the terminal holds (docs/operator.md).',
  });
  withVerbs(ops);

  const send = defineCommand(ops, {
    name: 'send <command>',
    summary:
      'sign a command (ping, info, queue-status, queue-list, retry-dead, sync-templates, set-log-level, reload-config, delete-user, restart), send it and print the answer',
    details: `The key: --key-file (a file holding only the key), else the secrets file of the config
(opsKey for --key-id site, the default; opsKeys.<id> for an operator's key id).
Examples:
  edge-agent ops send --site plant-a --terminal gate-7 ping
  edge-agent ops send --site plant-a --terminal gate-7 delete-user --arg employeeCode=E1001
  edge-agent ops send --terminal gate-7 retry-dead --arg 'ids:=["01J..."]' --key-id alice --key-file ~/.edge-agent/alice.key
Exit code: 0 when the terminal answered ok, 1 when it answered an error (or none came).`,
  })
    .option('--site <site>', 'the site of the terminal (default: terminal.site of the config)')
    .option('--terminal <id>', 'the terminal (default: terminal.id of the config)')
    .addOption(repeatable('--arg <name=value>', 'an argument (repeatable): name=value for a string, name:=JSON for any JSON value'))
    .option('--key-id <id>', "the key id to sign with: site (opsKey, the default) or an operator's id (opsKeys.<id>)")
    .option('--key-file <file>', 'a file holding only the ops key (64 hex characters) instead of the secrets file')
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--timeout <sec>', 'how long to wait for the answer (default 10)')
    .addOption(new Option('--config <file>', 'config file to read mqtt.*, the terminal and the secrets file from').helpGroup('Setup:'))
    .addOption(new Option('--data <dir>', 'data folder whose secrets.yaml holds the key').helpGroup('Setup:'))
    .addOption(new Option('--secrets <file>', 'the secrets file (ops keys, MQTT credentials)').helpGroup('Setup:'));
  withJson(send, 'print the whole answer {"transaction", "status", "command", "result"|"error", "at"} as JSON');
  return action<SendValues>(send, async (values, positionals) => {
    const command = positionals[0]!;
    if (!/^[a-z][a-z0-9-]{0,63}$/.test(command))
      throw usageError('ops send', `"${command.slice(0, 70)}" is not a command name (lower-case letters, digits and dashes)`, {
        command: command.slice(0, 70),
      });
    const { AgentError } = await import('../../core/errors.js');
    const { lookedAt, standaloneConfig, standaloneSecrets } = await import('../../config/standalone.js');
    const { readKeyFile, SITE_OPS_KEY_ID } = await import('../../config/secrets.js');
    const { sendCommand } = await import('../../ops/ops-client.js');
    const { mqttClientOptions } = await import('../../daemon/upstreams.js');
    const args = parseArgs(values.arg);
    const timeoutSec = values.timeout === undefined ? 10 : Number(values.timeout);
    if (!Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec > 600)
      throw usageError('ops send', `--timeout takes seconds (1 to 600), got "${values.timeout}"`);
    // An operator's workstation has no terminal's config: the broker, the terminal and the key on
    // the command line are enough (config/standalone.ts).
    const config = standaloneConfig(
      {
        config: values.config,
        data: values.data,
        secrets: values.secrets,
        mqtt: values.mqtt,
        site: values.site,
        terminal: values.terminal,
      },
      process.env,
      {
        complete: Boolean(values.mqtt && values.site && values.terminal && (values['key-file'] || values.secrets || values.data)),
      },
    );
    const prefix = values.prefix ?? config.mqtt.prefix;
    if (!config.mqtt.url) throw missingFlag('ops send', '--mqtt URL', 'the broker to send the command through', lookedAt(config));
    // Without a config, the schema's defaults (terminal-1 of site-1) would name a terminal nobody chose.
    if (!config.location.file && !values.site) throw missingFlag('ops send', '--site SITE', 'the site of the terminal', lookedAt(config));
    if (!config.location.file && !values.terminal)
      throw missingFlag('ops send', '--terminal ID', 'the terminal to send the command to', lookedAt(config));
    const secrets = standaloneSecrets(config);
    const kid = values['key-id'] ?? SITE_OPS_KEY_ID;
    const where = config.secretsPath ?? 'the secrets (no --key-file, --secrets, --data or --config given)';
    const key = values['key-file']
      ? readKeyFile(values['key-file'], '--key-file', 'opsKey')
      : kid === SITE_OPS_KEY_ID
        ? secrets.opsKey
        : (secrets.opsKeys[kid] ?? null);
    if (!key) {
      throw new AgentError(
        'OPS_NO_KEY',
        `no ops key ${kid === SITE_OPS_KEY_ID ? '(opsKey)' : `"${kid}" (opsKeys.${kid})`} in ${where}${secrets.sources.opsKey || secrets.sources.opsKeys ? '' : ' or the systemd credentials'}`,
        { kid, secretsFile: where },
        {
          hint: 'pass --key-file FILE (and --key-id ID for an operator key), or --secrets / --config naming the secrets file that holds it',
        },
      );
    }
    const base = { prefix, site: config.terminal.site, terminal: config.terminal.id };
    // Which key signs, always: a terminal that refuses it (OPS_UNAUTHENTICATED) holds another.
    const keySource = values['key-file']
      ? `--key-file ${values['key-file']}`
      : `${kid === SITE_OPS_KEY_ID ? 'opsKey' : `opsKeys.${kid}`} of ${secrets.sources[kid === SITE_OPS_KEY_ID ? 'opsKey' : 'opsKeys'] ?? where}${config.location.origin === 'demo' ? " (the embedded demo's)" : ''}`;
    err(`signing ${command} for ${base.site}/${base.terminal} with key id ${kid} (${keySource})\n`);
    const response = await sendCommand({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, 'ops-send'),
      base,
      command,
      args,
      key,
      kid,
      timeoutMs: timeoutSec * 1000,
    });
    if (values.json) printJson(response);
    else if (response.status === 'ok') {
      out(
        `ok: ${command} on ${base.site}/${base.terminal} (transaction ${response.transaction})\n${JSON.stringify(response.result, null, 2)}\n`,
      );
    } else {
      const e = response.error ?? { code: 'OPS_COMMAND_FAILED', message: 'the terminal answered an error without details' };
      const keyNote = e.code === 'OPS_UNAUTHENTICATED' ? ` (signed with key id ${kid}, ${keySource})` : '';
      err(`${command} on ${base.site}/${base.terminal}: ${e.code}: ${e.message}${keyNote}${e.hint ? `\n  hint: ${e.hint}` : ''}\n`);
    }
    return response.status === 'ok' ? 0 : 1;
  });
}
