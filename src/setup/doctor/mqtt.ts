/** The MQTT check: the broker takes this terminal's credentials and TLS files. */
import mqtt from 'mqtt';
import type { AgentConfig } from '../../config/config.js';
import type { Secrets } from '../../config/secrets.js';
import { AgentError, isAgentError } from '../../core/errors.js';
import { withTimeout } from '../../core/time.js';
import { mqttClientOptions } from '../../daemon/upstreams.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

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
