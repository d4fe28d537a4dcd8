/**
 * One consumer connection of the ingest: a member of the shared subscription with its own
 * persistent session, whose PUBACKs are held back until the attendance API has accepted the
 * message (see ingest.ts for why, and `holdAcknowledgements` for how).
 */
import mqtt, { type IClientOptions, type IConnackPacket, type IPublishPacket, type MqttClient } from 'mqtt';
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { mqttAccessOptions } from '../upload/mqtt-options.js';
import { eventsFilter, type IngestOptions } from './ingest-options.js';

const log = logger('ingest');

export interface Connection {
  index: number;
  client: MqttClient;
  /** Incremented when the connection drops: an acknowledgement of an earlier connection is not sent. */
  generation: number;
  up: boolean;
  /** Sends the PUBACK of `messageId` now. */
  acknowledge(messageId: number): void;
  /** The message whose PUBACK mqtt.js is about to send: held back instead. */
  holding: number | undefined;
  /** When the keepalive timer was last pushed back by a message (Date.now()). */
  aliveAt: number;
}

type SendPacket = (
  packet: { cmd: string; messageId?: number },
  cb?: (err?: Error) => void,
  cbStorePut?: () => void,
  noStore?: boolean,
) => void;

/**
 * mqtt.js sends a message's PUBACK as soon as `handleMessage` calls back, and only then reads the
 * next message. This lets the callback come at once while the PUBACK of that message is held back,
 * to be sent by `acknowledge` later. It relies on mqtt.js 5's internal `_sendPacket` (checked here,
 * and by test/integration/ingest-mqtt.test.ts, which fails if a message is acknowledged early).
 */
export function holdAcknowledgements(client: MqttClient, conn: Pick<Connection, 'holding'>): (messageId: number) => void {
  const internal = client as unknown as { _sendPacket?: SendPacket };
  const send = internal._sendPacket?.bind(client);
  if (typeof send !== 'function') {
    throw new AgentError(
      'INTERNAL',
      'this mqtt.js has no _sendPacket: the ingest cannot hold acknowledgements',
      {},
      { hint: 'install the mqtt version of package.json (5.x)' },
    );
  }
  internal._sendPacket = (packet, cb, cbStorePut, noStore) => {
    if (packet.cmd === 'puback' && packet.messageId !== undefined && packet.messageId === conn.holding) {
      conn.holding = undefined;
      cb?.();
      return;
    }
    send(packet, cb, cbStorePut, noStore);
  };
  // Written straight to the connection (never queued for a later one: see `generation`).
  return (messageId) => send({ cmd: 'puback', messageId }, undefined, undefined, true);
}

/**
 * Opens consumer connection `index` (client id `<clientId>-<index>`, a persistent session, the
 * events subscription on every connect) and resolves once the broker accepted it, with the
 * CONNACK's word on shared subscriptions; rejects with INGEST_MQTT_CONNECT (the client ended)
 * when the broker refuses it or does not answer in 10 s. Every message goes to `onMessage`.
 */
export function openConsumerConnection(
  o: IngestOptions,
  index: number,
  protocol: 5 | 4,
  onMessage: (conn: Connection, packet: IPublishPacket, done: (err?: Error) => void) => void,
): Promise<{ connection: Connection; sharedSubscriptionAvailable?: boolean }> {
  const opts: IClientOptions = {
    ...mqttAccessOptions(o.access ?? {}),
    clientId: `${o.clientId}-${index}`,
    clean: protocol === 4 && o.sessionExpirySec === 0,
    protocolVersion: protocol,
    reconnectPeriod: 2000,
    connectTimeout: 10_000,
    resubscribe: false,
    ...(protocol === 5 ? { properties: { sessionExpiryInterval: o.sessionExpirySec, receiveMaximum: o.inflight } } : {}),
  };
  const client = mqtt.connect(o.url, opts);
  const conn: Connection = { index, client, generation: 0, up: false, holding: undefined, acknowledge: () => undefined, aliveAt: 0 };
  conn.acknowledge = holdAcknowledgements(client, conn);
  client.handleMessage = (packet, done) => onMessage(conn, packet, done);
  const filter = eventsFilter(o.prefix, o.group);
  client.on('connect', () => {
    conn.up = true;
    // Always subscribe: a session that outlived an unsubscribe (a drained stop) has none.
    client.subscribe(filter, { qos: 1 }, (err, granted) => {
      if (err) log.error({ err: err.message, filter }, 'subscribe failed');
      else if (granted?.some((g) => g.qos > 2)) log.error({ filter, granted }, 'the broker refused the subscription');
    });
  });
  client.on('close', () => {
    if (conn.up) log.warn({ clientId: opts.clientId }, 'broker connection lost; reconnecting');
    conn.up = false;
    conn.generation++;
  });
  client.on('error', (err) => log.warn({ err: err.message, clientId: opts.clientId }, 'broker connection error'));
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      cleanup();
      client.end(true);
      reject(
        new AgentError(
          'INGEST_MQTT_CONNECT',
          `cannot connect to the broker at ${o.url}: ${err.message}`,
          { url: o.url, clientId: opts.clientId, reasonCode: (err as { code?: unknown }).code ?? null },
          { cause: err, retryable: true },
        ),
      );
    };
    const timer = setTimeout(() => fail(new Error('no answer in 10 s')), 10_000);
    const onConnect = (connack: IConnackPacket) => {
      cleanup();
      resolve({
        connection: conn,
        ...(connack.properties?.sharedSubscriptionAvailable !== undefined
          ? { sharedSubscriptionAvailable: connack.properties.sharedSubscriptionAvailable }
          : {}),
      });
    };
    const onError = (err: Error) => fail(err);
    function cleanup() {
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
    }
    client.once('connect', onConnect);
    client.once('error', onError);
  });
}

/** Whether a refused connection means the broker does not speak this MQTT version. */
export function isProtocolRefusal(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown; message?: string } }).cause;
  return cause?.code === 1 || cause?.code === 132 || /protocol|unsupported|refused/i.test(cause?.message ?? '');
}
