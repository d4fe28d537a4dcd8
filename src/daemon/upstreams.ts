/**
 * Builds the sinks of config `upstream` (`api`, `mqtt` or both) from the config and secrets,
 * refusing with a clear `CONFIG_MISSING` when an upstream lacks what it needs.
 *
 * Tested in test/unit/daemon/daemon.test.ts (an api upstream without a URL or key refused, naming
 * what is missing) and test/integration/agent-badge-e2e.test.ts.
 */
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

/** Options of the agent's other MQTT clients (ops, site sync, doctor, fleet). */
export function mqttClientOptions(
  config: AgentConfig,
  secrets: Pick<Secrets, 'mqttUsername' | 'mqttPassword'>,
  clientId: string,
): IClientOptions {
  return { ...mqttAccessOptions(mqttAccess(config, secrets)), clientId, reconnectPeriod: 2000, connectTimeout: 10_000, protocolVersion: 4 };
}
