/**
 * `edge-agent console`: the operations console, a web page of the whole fleet fed from the broker.
 *
 * Tested in test/integration/console-http.test.ts (edge-agent console over HTTP, its password hash,
 * its refusal to listen beyond loopback without a login) and
 * test/integration/console-browser.test.ts.
 */
import { Option, type Command } from 'commander';
import { action, defineCommand, intFlag, missingFlag, usageError } from '../command.js';

type Values = {
  mqtt?: string;
  prefix?: string;
  port?: string;
  host?: string;
  config?: string;
  data?: string;
  secrets?: string;
  'key-id'?: string;
  'key-file'?: string;
  'hash-password'?: boolean;
};

/** The first line of stdin, or a hidden prompt on a terminal. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const { password } = await import('@inquirer/prompts');
    const first = await password({ message: 'Console password (at least 8 characters):', mask: '*' });
    const again = await password({ message: 'Again:', mask: '*' });
    if (first !== again) throw usageError('console', 'the two passwords differ');
    return first;
  }
  let text = '';
  for await (const chunk of process.stdin) {
    text += (chunk as Buffer).toString('utf8');
    if (text.includes('\n') || text.length > 4096) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'console',
    summary: 'serve the operations console: the fleet at a glance in a browser, alerts, /metrics for Prometheus',
    audience: 'operations',
    details: `A web page of every terminal under the prefix, fed live from the broker's retained state,
info and metrics: the fleet grouped by site, each terminal's page with 24 hours of history, its
errors and dead letters, alert rules (console.alerts in the config) shown in the page and
published retained on <prefix>/<site>/alerts, /metrics for Prometheus, and Home Assistant
discovery for the sites in console.homeAssistant.sites. Serves until SIGINT or SIGTERM.

Login: consolePassword in the secrets file (make its hash with --hash-password). Without it the
console is read-only and listens on loopback only; with it every page needs the login, and a
signed command (ping, queue status, retry dead letters, sync templates, log level, restart) can
be sent from a terminal's page when the console holds an ops key.
Examples:
  edge-agent console --mqtt mqtt://broker:1883
  echo 'a long passphrase' | edge-agent console --hash-password     # → consolePassword: scrypt$...
  edge-agent console --config /etc/edge-agent/console.yaml --host 0.0.0.0 --port 8470`,
  })
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--prefix <prefix>', 'the topic prefix (default: mqtt.prefix of the config)')
    .option('--port <port>', 'TCP port; 0 picks a free one (default: console.port of the config, 8470)')
    .option('--host <host>', 'address to listen on (default: console.host, 127.0.0.1); beyond loopback only with a login')
    .option('--key-id <id>', "the ops key that signs commands: site (opsKey, the default) or an operator's id (opsKeys.<id>)")
    .option('--key-file <file>', 'a file holding only the ops key (64 hex characters) instead of the secrets file')
    .option('--hash-password', 'read a password from stdin (or a prompt), print its scrypt hash for consolePassword and exit')
    .addOption(
      new Option('--config <file>', 'config file: mqtt.*, console.* (alert rules, Home Assistant) and the secrets file').helpGroup(
        'Setup:',
      ),
    )
    .addOption(new Option('--data <dir>', 'data folder whose secrets.yaml holds the password and the ops key').helpGroup('Setup:'))
    .addOption(new Option('--secrets <file>', 'the secrets file (consolePassword, ops keys, MQTT credentials)').helpGroup('Setup:'));
  return action<Values>(cmd, async (values) => {
    if (values['hash-password']) {
      const { hashSecret } = await import('../../core/secret-hash.js');
      const pw = await readPassword();
      if (pw.length < 8) throw usageError('console', 'the password must have at least 8 characters');
      process.stdout.write(`${await hashSecret(pw)}\n`);
      return 0;
    }
    const port = intFlag('port', values.port);
    if (port !== undefined && (port < 0 || port > 65535))
      throw usageError('console', `--port must be 0..65535, got ${port}`, { flag: 'port', value: port });
    const { AgentError } = await import('../../core/errors.js');
    const { lookedAt, standaloneConfig, standaloneSecrets } = await import('../../config/standalone.js');
    const { readKeyFile, SITE_OPS_KEY_ID } = await import('../../config/secrets.js');
    const { mqttClientOptions } = await import('../../daemon/upstreams.js');
    const { ConsoleLogin } = await import('../../console/login.js');
    const { startConsole } = await import('../../console/console.js');
    // An operator's machine has no terminal's config: --mqtt is enough (config/standalone.ts).
    const config = standaloneConfig({ config: values.config, data: values.data, secrets: values.secrets, mqtt: values.mqtt }, process.env, {
      complete: values.mqtt !== undefined,
    });
    if (!config.mqtt.url) throw missingFlag('console', '--mqtt URL', 'the broker to read the fleet from', lookedAt(config));
    const secrets = standaloneSecrets(config);
    const kid = values['key-id'] ?? SITE_OPS_KEY_ID;
    const key = values['key-file']
      ? readKeyFile(values['key-file'], '--key-file', 'opsKey')
      : kid === SITE_OPS_KEY_ID
        ? secrets.opsKey
        : (secrets.opsKeys[kid] ?? null);
    if (!key && values['key-id']) {
      throw new AgentError(
        'OPS_NO_KEY',
        `no ops key "${kid}" (opsKeys.${kid}) in ${config.secretsPath ?? 'the secrets (no --secrets, --data or --config given)'}`,
        { kid },
        { hint: 'pass --key-file FILE, or --secrets / --config naming the secrets file that holds it' },
      );
    }
    const login = await ConsoleLogin.create(secrets.consolePassword, config.console.sessionHours);
    const running = await startConsole({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, `console-${process.pid}`),
      prefix: values.prefix ?? config.mqtt.prefix,
      maxPayloadBytes: config.mqtt.maxPayloadBytes,
      // The page shows times in one zone, the CLI's unless console.timeZone names another.
      settings: { ...config.console, timeZone: config.console.timeZone ?? config.terminal.timeZone },
      ...(values.host ? { host: values.host } : {}),
      ...(port !== undefined ? { port } : {}),
      login,
      signer: key ? { key, kid } : null,
    });
    process.stdout.write(
      `console listening on ${running.url} (broker ${config.mqtt.url}, prefix ${values.prefix ?? config.mqtt.prefix}; login ${running.loginRequired ? 'required' : 'off: read-only, loopback only'}; commands ${running.commands.enabled ? `on, signed with key id ${running.commands.kid}` : `off: ${running.commands.reason}`}; Ctrl-C stops it)\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.stop();
    return 0;
  });
}
