/** MQTT connection options from the config and secrets (TLS files, credentials, keepalive). */
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { AgentError } from '../core/errors.js';
import type { AgentConfig } from '../agent/config.js';
import type { Secrets } from '../agent/secrets.js';

function readTlsFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new AgentError('OPS_MQTT_TLS_FILE', `cannot read the MQTT ${what} file ${path}`, { path }, { hint: `check mqtt.tls.${what} in the config`, cause: err });
  }
}

export function mqttClientOptions(config: AgentConfig, secrets: Pick<Secrets, 'mqttUsername' | 'mqttPassword'>, clientId: string): IClientOptions {
  const o: IClientOptions = {
    clientId,
    keepalive: config.mqtt.keepaliveSec,
    reconnectPeriod: 2000,
    connectTimeout: 10_000,
    protocolVersion: 4,
  };
  const username = secrets.mqttUsername ?? config.mqtt.username;
  if (username) o.username = username;
  if (secrets.mqttPassword) o.password = secrets.mqttPassword;
  const { ca, cert, key } = config.mqtt.tls;
  if (ca) o.ca = readTlsFile(ca, 'ca');
  if (cert) o.cert = readTlsFile(cert, 'cert');
  if (key) o.key = readTlsFile(key, 'key');
  return o;
}
