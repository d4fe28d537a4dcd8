/**
 * Builds the sinks of config `upstream` (`api`, `mqtt` or both) from the config and secrets,
 * refusing with a clear `CONFIG_MISSING` when an upstream lacks what it needs.
 *
 * Tested in test/unit/daemon/upstreams.test.ts (the events client id), test/unit/daemon/daemon.test.ts (an api upstream without a URL or key refused, naming
 * what is missing) and test/integration/agent-badge-e2e.test.ts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { AgentError } from '../core/errors.js';
import { AttendanceClient } from '../api/client.js';
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { ApiSink } from '../upload/api-sink.js';
import { MqttSink } from '../upload/mqtt-sink.js';
import type { IClientOptions } from 'mqtt';
import { mqttAccessOptions, type MqttAccess } from '../upload/mqtt-options.js';
import type { Sink } from '../upload/sink.js';

export function createAttendanceClient(config: AgentConfig, secrets: Secrets): AttendanceClient {
  if (!config.api.url) {
    throw new AgentError(
      'CONFIG_MISSING',
      'upstream "api" needs api.url',
      { key: 'api.url' },
      {
        hint: 'set api.url in the config or pass --api URL; to deliver to the broker instead, set upstream: [mqtt] (or pass --upstream mqtt): a broker URL alone is monitoring',
      },
    );
  }
  if (!secrets.apiKey || !secrets.apiSecret) {
    throw new AgentError(
      'CONFIG_MISSING',
      `upstream "api" needs the API ${secrets.apiKey ? 'secret' : 'key'}`,
      { key: secrets.apiKey ? 'apiSecret' : 'apiKey' },
      {
        hint: 'write apiKey and apiSecret in the secrets file (edge-agent provision), or pass --api-key K --api-secret-file FILE',
      },
    );
  }
  return new AttendanceClient({
    baseUrl: config.api.url,
    clientId: config.api.clientId,
    apiKey: secrets.apiKey,
    apiSecret: secrets.apiSecret,
    pathForm: config.api.pathForm,
    timeoutMs: config.api.timeoutMs,
    tzOffsetUnit: config.api.tzOffsetUnit,
  });
}

export function createSinks(config: AgentConfig, secrets: Secrets): Sink[] {
  const sinks: Sink[] = [];
  for (const upstream of new Set(config.upstream)) {
    if (upstream === 'api') sinks.push(new ApiSink(createAttendanceClient(config, secrets)));
    else {
      if (!config.mqtt.url) {
        throw new AgentError(
          'CONFIG_MISSING',
          'upstream "mqtt" needs mqtt.url',
          { key: 'mqtt.url' },
          { hint: 'set mqtt.url in the config or pass --mqtt URL (or remove mqtt from upstream)' },
        );
      }
      sinks.push(
        new MqttSink({
          url: config.mqtt.url,
          prefix: config.mqtt.prefix,
          site: config.terminal.site,
          terminal: config.terminal.id,
          clientId: eventsClientId(config.terminal.site, config.terminal.id, secrets),
          ...mqttAccess(config, secrets),
        }),
      );
    }
  }
  return sinks;
}

/** Credentials, TLS files and keepalive from the config and secrets, as every MQTT client here uses them. */
export function mqttAccess(config: AgentConfig, secrets: Pick<Secrets, 'mqttUsername' | 'mqttPassword'>): MqttAccess {
  return {
    username: secrets.mqttUsername ?? config.mqtt.username,
    password: secrets.mqttPassword,
    tls: config.mqtt.tls,
    keepaliveSec: config.mqtt.keepaliveSec,
  };
}

/** Drawn once per process: the agent's client ids stay the same while it runs. */
const PROCESS_SUFFIX = randomBytes(6).toString('hex');

/**
 * The client id of one of the terminal's clean-session MQTT clients (`ops`, `sync`):
 * `<terminal>-<role>-<12 random hex>`, stable per process. Guessable from the terminal id, it let
 * anyone connect as `gate-1-ops`, take the connection over and make the broker publish gate-1's
 * last will.
 */
export function terminalClientId(terminal: string, role: string): string {
  return `${terminal}-${role}-${PROCESS_SUFFIX}`;
}

/**
 * The events sink's client id. Its session is persistent, so the id must stay the same across
 * restarts (a random one would leave a session behind on the broker at every start), and must not
 * be guessable from the terminal id (anyone connecting as `gate-1-events` took the connection over):
 * `<terminal>-events-<12 hex>`, an HMAC of the site and terminal under the terminal's template key
 * (else its ops key). A terminal with neither keeps `<terminal>-events`.
 */
export function eventsClientId(site: string, terminal: string, secrets: Pick<Secrets, 'templateKey' | 'opsKey'>): string {
  const key = secrets.templateKey ?? secrets.opsKey;
  if (!key) return `${terminal}-events`;
  const tag = createHmac('sha256', key).update(`edge-agent-events-client\0${site}\0${terminal}`).digest('hex').slice(0, 12);
  return `${terminal}-events-${tag}`;
}

/** Options of the agent's other MQTT clients (ops, site sync, doctor, fleet). */
export function mqttClientOptions(
  config: AgentConfig,
  secrets: Pick<Secrets, 'mqttUsername' | 'mqttPassword'>,
  clientId: string,
): IClientOptions {
  return { ...mqttAccessOptions(mqttAccess(config, secrets)), clientId, reconnectPeriod: 2000, connectTimeout: 10_000, protocolVersion: 4 };
}
