/** The dead-letter publisher, against a real in-process broker: published before acknowledged, never dropped. */
import mqtt from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadLetters } from '../../../src/ingest/dead-letters.js';
import { startAckingBroker } from '../../helpers/broker.js';

const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const TOPIC = 'attendance/ingest/dead-letters';
const lettersFor = (url: string) => {
  const letters = new DeadLetters({ url, clientId: 'ingest-a', deadLetterTopic: TOPIC, retryBaseMs: 20, retryCapMs: 50 });
  cleanup.push(() => letters.close());
  return letters;
};

describe('the dead letters', () => {
  it('say why, when, by which ingest, on which topic, with the original message', () => {
    const letters = lettersFor('mqtt://127.0.0.1:1');
    const at = new Date('2026-03-02T08:00:00.000Z');
    expect(
      JSON.parse(letters.document({ raw: Buffer.from('{"id":"x"}'), status: 'USER_NOT_AVAILABLE', description: 'no such user' }, at)),
    ).toEqual({
      status: 'USER_NOT_AVAILABLE',
      description: 'no such user',
      refusedAt: '2026-03-02T08:00:00.000Z',
      ingest: 'ingest-a',
      event: { id: 'x' },
    });
    const notJson = JSON.parse(
      letters.document(
        { raw: Buffer.from('x'.repeat(5000)), status: 'INVALID_PAYLOAD', description: 'not JSON', topic: 'a/s/t/events' },
        at,
      ),
    ) as { topic: string; event: string };
    expect(notJson.topic).toBe('a/s/t/events');
    expect(notJson.event).toHaveLength(2048);
  });

  it('are published on the topic (QoS 1) before the caller acknowledges, and retried until the publisher is connected', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const reader = await mqtt.connectAsync(broker.url, { clientId: 'reader' });
    cleanup.push(() => reader.endAsync(true));
    const seen: Array<{ status: string }> = [];
    reader.on('message', (_t, payload) => seen.push(JSON.parse(payload.toString()) as { status: string }));
    await reader.subscribeAsync(TOPIC, { qos: 1 });
    const letters = lettersFor(broker.url);
    let published = 0;
    // Sent before the publisher connects (a consumer can take a message before it does).
    void letters.send({ raw: Buffer.from('{}'), status: 'INVALID_PARAMETERS', description: 'bad' }, () => {
      expect(seen).toHaveLength(0);
      published++;
    });
    await new Promise((r) => setTimeout(r, 60));
    expect(published).toBe(0);
    letters.open(4);
    for (const deadline = Date.now() + 5000; published === 0 || seen.length === 0; ) {
      if (Date.now() > deadline) throw new Error('the dead letter was not published');
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(published).toBe(1);
    expect(seen.map((s) => s.status)).toEqual(['INVALID_PARAMETERS']);
  });

  it('stop being retried once closed: nothing is acknowledged then', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const letters = lettersFor(broker.url);
    let published = 0;
    void letters.send({ raw: Buffer.from('{}'), status: 'X', description: 'y' }, () => published++);
    await new Promise((r) => setTimeout(r, 30));
    await letters.close();
    // A retry still pending would find this connection and publish.
    letters.open(4);
    await new Promise((r) => setTimeout(r, 300));
    expect(published).toBe(0);
  });
});
