/**
 * One consumer connection of the ingest, against a real in-process broker (aedes): it subscribes,
 * hands every message over at once, and sends a message's PUBACK only when told to.
 */
import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Connection,
  holdAcknowledgements,
  isProtocolRefusal,
  openConsumerConnection,
} from '../../../src/ingest/consumer-connection.js';
import { INGEST_DEFAULTS, type IngestOptions } from '../../../src/ingest/ingest-options.js';
import { freePort, startAckingBroker } from '../../helpers/broker.js';
import { until } from '../../helpers/poll.js';

const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function broker(): Promise<{ url: string; acks: number[] }> {
  const b = await startAckingBroker();
  cleanup.push(() => b.stop());
  return b;
}

const options = (url: string): IngestOptions => ({
  ...INGEST_DEFAULTS,
  url,
  group: null,
  clientId: `unit-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
  connections: 1,
  protocol: 4,
  api: { addEvents: () => Promise.reject(new Error('not used')) },
  deadLetterTopic: 'attendance/ingest/dead-letters',
});

describe('holdAcknowledgements', () => {
  it("swallows mqtt.js's PUBACK of the message being held and sends it when told", () => {
    const sent: Array<{ cmd: string; messageId?: number; noStore?: boolean }> = [];
    const client = {
      _sendPacket(packet: { cmd: string; messageId?: number }, cb?: () => void, _put?: unknown, noStore?: boolean) {
        sent.push({ ...packet, ...(noStore ? { noStore } : {}) });
        cb?.();
      },
    } as unknown as MqttClient;
    const conn: Pick<Connection, 'holding'> = { holding: 7 };
    const acknowledge = holdAcknowledgements(client, conn);
    let calledBack = 0;
    const internal = client as unknown as { _sendPacket(p: { cmd: string; messageId?: number }, cb?: () => void): void };
    internal._sendPacket({ cmd: 'puback', messageId: 7 }, () => calledBack++);
    expect(sent).toEqual([]);
    expect(calledBack).toBe(1);
    expect(conn.holding).toBeUndefined();
    internal._sendPacket({ cmd: 'puback', messageId: 8 });
    internal._sendPacket({ cmd: 'pingreq' });
    acknowledge(7);
    expect(sent).toEqual([{ cmd: 'puback', messageId: 8 }, { cmd: 'pingreq' }, { cmd: 'puback', messageId: 7, noStore: true }]);
  });

  it('refuses an mqtt.js without the internal it relies on', () => {
    expect(() => holdAcknowledgements({} as MqttClient, { holding: undefined })).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('isProtocolRefusal', () => {
  it('knows the refusals of a broker that does not speak MQTT 5', () => {
    expect(isProtocolRefusal({ cause: { code: 1 } })).toBe(true);
    expect(isProtocolRefusal({ cause: { code: 132 } })).toBe(true);
    expect(isProtocolRefusal({ cause: { message: 'Connection refused: Unsupported protocol version' } })).toBe(true);
    expect(isProtocolRefusal({ cause: { code: 5, message: 'Not authorized' } })).toBe(false);
    expect(isProtocolRefusal(new Error('x'))).toBe(false);
  });
});

describe('openConsumerConnection', () => {
  it('subscribes to the events, hands each message over at once and holds its PUBACK until acknowledged', async () => {
    const b = await broker();
    const o = options(b.url);
    const got: Array<{ conn: Connection; packet: IPublishPacket }> = [];
    const { connection } = await openConsumerConnection(o, 3, 4, (conn, packet, done) => {
      got.push({ conn, packet });
      conn.holding = packet.messageId;
      done();
    });
    cleanup.push(() => connection.client.endAsync(true));
    expect(connection.index).toBe(3);
    expect(connection.client.options.clientId).toBe(`${o.clientId}-3`);
    await until('connected', () => connection.up);
    const publisher = await mqtt.connectAsync(b.url, { clientId: `pub-${process.pid}` });
    cleanup.push(() => publisher.endAsync(true));
    // The subscription is sent on connect: publish until it has taken effect.
    for (let i = 0; got.length === 0 && i < 50; i++) {
      await publisher.publishAsync('attendance/plant/gate-1/events', `{"n":${i}}`, { qos: 1 });
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(got.length).toBeGreaterThan(0);
    const first = got[0]!;
    expect(first.conn).toBe(connection);
    expect(first.packet.topic).toBe('attendance/plant/gate-1/events');
    await new Promise((r) => setTimeout(r, 100));
    expect(b.acks).not.toContain(first.packet.messageId);
    connection.acknowledge(first.packet.messageId!);
    await until('the broker got the PUBACK', () => b.acks.includes(first.packet.messageId!));
  });

  it('rejects with INGEST_MQTT_CONNECT when no broker answers', async () => {
    const port = await freePort();
    await expect(openConsumerConnection(options(`mqtt://127.0.0.1:${port}`), 0, 4, () => undefined)).rejects.toMatchObject({
      code: 'INGEST_MQTT_CONNECT',
      retryable: true,
      context: { clientId: expect.stringMatching(/-0$/) },
    });
  });
});
