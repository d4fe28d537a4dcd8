/**
 * The operator's side of a command (`edge-agent ops send`): signs it with an ops key, publishes
 * it on `<prefix>/<site>/<terminal>/req/<command>` and waits for the answer with the same
 * transaction on `.../res/<command>`.
 *
 * Tested in test/integration/ops-mqtt.test.ts (signed requests answered over a real broker),
 * test/integration/agent-ops.test.ts and test/integration/agent-mqtt-abuse.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { AgentError } from '../core/errors.js';
import { SITE_OPS_KEY_ID, type Secrets } from '../config/secrets.js';
import { publishChecked } from '../upload/mqtt-publish.js';
import { MAX_REQUEST_BYTES, type CommandResponse } from './commands.js';
import { signCommand } from './ops-auth.js';
import { requestTopic, responseTopic, type TopicBase } from './topics.js';

export interface SendCommandOptions {
  url: string;
  mqttOptions?: IClientOptions;
  base: TopicBase;
  command: string;
  args: Record<string, unknown>;
  key: Buffer;
  /** `site` for the site's ops key, or an operator's key id. */
  kid: string;
  timeoutMs: number;
  /** Default: `<host>-<random>`, new for every command. */
  transaction?: string;
  now?: () => number;
}

/** A command's full request payload, signed. */
export function signedRequest(
  o: Pick<SendCommandOptions, 'base' | 'command' | 'args' | 'key' | 'kid'> & { transaction: string; ts: number },
): string {
  const auth = signCommand(o.key, {
    site: o.base.site,
    terminal: o.base.terminal,
    command: o.command,
    transaction: o.transaction,
    ts: o.ts,
    kid: o.kid,
    args: o.args,
  });
  return JSON.stringify({ transaction: o.transaction, ...o.args, auth });
}

/** Sends one signed command and resolves to the terminal's answer (ok or error). */
export async function sendCommand(o: SendCommandOptions): Promise<CommandResponse> {
  if ('transaction' in o.args || 'auth' in o.args)
    throw new AgentError(
      'CLI_USAGE',
      'an argument may not be called "transaction" or "auth"',
      {},
      { hint: 'those members are set by ops send' },
    );
  const transaction =
    o.transaction ??
    `${
      hostname()
        .replace(/[^A-Za-z0-9._-]/g, '')
        .slice(0, 32) || 'ops'
    }-${randomUUID()}`;
  let client: MqttClient;
  try {
    client = await mqtt.connectAsync(o.url, {
      reconnectPeriod: 0,
      connectTimeout: Math.min(o.timeoutMs, 10_000),
      ...o.mqttOptions,
      clientId: `ops-send-${randomUUID().slice(0, 8)}`,
      clean: true,
    });
  } catch (err) {
    throw new AgentError(
      'OPS_MQTT_CONNECT',
      `cannot connect to the broker at ${o.url}: ${(err as Error).message}`,
      { url: o.url },
      { hint: 'check the broker URL, credentials and that the broker runs', retryable: true, cause: err },
    );
  }
  let onClose: () => void = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = new Promise<CommandResponse>((resolve, reject) => {
      timer = setTimeout(() => {
        reject(
          new AgentError(
            'OPS_MQTT_TIMEOUT',
            `no answer from ${o.base.terminal} to ${o.command} within ${Math.round(o.timeoutMs / 1000)} s`,
            { terminal: o.base.terminal, command: o.command, transaction },
            {
              hint: `check that the terminal is online (edge-agent fleet --site ${o.base.site}) and that --site, --terminal and --prefix name it`,
              retryable: true,
            },
          ),
        );
      }, o.timeoutMs);
      client.on('message', (_topic, payload) => {
        let r: CommandResponse;
        try {
          r = JSON.parse(payload.toString('utf8')) as CommandResponse;
        } catch {
          return;
        }
        if (r && typeof r === 'object' && r.transaction === transaction) {
          clearTimeout(timer);
          resolve(r);
        }
      });
      onClose = () => {
        clearTimeout(timer);
        reject(new AgentError('OPS_MQTT_CLOSED', `the broker at ${o.url} closed the connection`, { url: o.url }));
      };
      client.once('close', onClose);
    });
    answer.catch(() => undefined);
    await client.subscribeAsync(responseTopic(o.base, o.command), { qos: 1 });
    const payload = signedRequest({ ...o, transaction, ts: (o.now ?? Date.now)() });
    await publishChecked(client, requestTopic(o.base, o.command), payload, { qos: 1 }, MAX_REQUEST_BYTES);
    return await answer;
  } finally {
    clearTimeout(timer);
    client.off('close', onClose);
    await client.endAsync().catch(() => undefined);
  }
}

/** One line for an operator: how to send a command, and where the key that signs it is (never the key). */
export function opsKeyLine(secrets: Pick<Secrets, 'opsKey' | 'opsKeys' | 'sources'>, secretsFile: string | null): string {
  const operators = Object.keys(secrets.opsKeys).sort();
  const keys = [
    ...(secrets.opsKey ? [`opsKey (key id ${SITE_OPS_KEY_ID}) from ${secrets.sources.opsKey}`] : []),
    ...(operators.length ? [`opsKeys ${operators.join(', ')} from ${secrets.sources.opsKeys}`] : []),
  ];
  const where = keys.length
    ? keys.join('; ')
    : `none in ${secretsFile ?? 'the secrets (pass --secrets or --config)'}: give ops send --key-file FILE`;
  return `commands: edge-agent ops send --site SITE --terminal ID <command> [--arg name=value]  (signing key: ${where})`;
}
