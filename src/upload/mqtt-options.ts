/**
 * The MQTT connection options every client of the agent shares: credentials, keepalive, TLS files.
 *
 * Tested in test/unit/upload/mqtt-sink.test.ts (an unreadable TLS file named) and
 * test/integration/provision-mqtt-tls.test.ts (CA, credentials and connection over TLS).
 */
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { AgentError } from '../core/errors.js';

export interface MqttAccess {
  username?: string | null;
  password?: string | null;
  tls?: { ca: string | null; cert: string | null; key: string | null };
  keepaliveSec?: number;
}

function tlsFile(what: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new AgentError(
      'CONFIG_TLS_UNREADABLE',
      `cannot read the MQTT TLS ${what} file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file, what },
      {
        hint: `check mqtt.tls.${what} in the config and that the agent user may read the file`,
        cause: err,
      },
    );
  }
}

/** Credentials, keepalive and TLS material as mqtt.js options; an unreadable TLS file is CONFIG_TLS_UNREADABLE. */
export function mqttAccessOptions(o: MqttAccess): IClientOptions {
  const opts: IClientOptions = { keepalive: o.keepaliveSec ?? 30 };
  if (o.username) opts.username = o.username;
  if (o.password) opts.password = o.password;
  if (o.tls?.ca) opts.ca = tlsFile('ca', o.tls.ca);
  if (o.tls?.cert) opts.cert = tlsFile('cert', o.tls.cert);
  if (o.tls?.key) opts.key = tlsFile('key', o.tls.key);
  return opts;
}
