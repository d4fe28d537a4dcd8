/**
 * The ingest in one process against a real in-process broker (aedes) and an in-memory attendance
 * API (the one fake: the API's own tests are elsewhere): what it delivers, drops, dead-letters
 * and acknowledges, and when.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import type { AttendanceEvent, Envelope } from '../../../src/api/types.js';
import { AgentError } from '../../../src/core/errors.js';
import { INGEST_DEFAULTS, Ingest, type IngestOptions } from '../../../src/ingest/ingest.js';
import type { EventsClient } from '../../../src/upload/api-sink.js';
import { startAckingBroker } from '../../helpers/broker.js';
import { until } from '../../helpers/poll.js';

const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const DEAD = 'attendance/ingest/dead-letters';

/** An API that accepts every event but employee GONE's, failing the first `failFirst` requests. */
function fakeApi(failFirst = 0): EventsClient & { batches: AttendanceEvent[][] } {
  let calls = 0;
  const batches: AttendanceEvent[][] = [];
  return {
    batches,
    addEvents: async (events: AttendanceEvent[]) => {
      if (calls++ < failFirst) throw new AgentError('API_NETWORK', 'the service is down', {}, { retryable: true });
      batches.push(events);
      return {
        statusCode: 'SUCCESS',
        returnValue: events.map((e) =>
          e.employeeCode === 'GONE'
            ? { statusCode: 'USER_NOT_AVAILABLE', statusDescription: 'no such employee', returnValue: null }
            : { statusCode: 'SUCCESS', returnValue: e },
        ),
      } as Envelope<Envelope<AttendanceEvent>[]>;
    },
  };
}

const punch = (id: string, employeeCode: string) =>
  JSON.stringify({ id, employeeCode, direction: 'in', time: '2026-03-02 07:58:00', tzOffset: 60, recordedAt: new Date().toISOString() });

async function setUp(
  api: EventsClient,
): Promise<{ ingest: Ingest; publisher: MqttClient; acks: number[]; dead: Array<{ status: string }> }> {
  const broker = await startAckingBroker();
  cleanup.push(() => broker.stop());
  const options: IngestOptions = {
    ...INGEST_DEFAULTS,
    url: broker.url,
    group: null,
    clientId: `unit-ingest-${Math.random().toString(16).slice(2, 8)}`,
    connections: 1,
    protocol: 4,
    api,
    deadLetterTopic: DEAD,
    retryBaseMs: 20,
    retryCapMs: 100,
    drainMs: 2000,
  };
  const ingest = new Ingest(options);
  cleanup.push(() => ingest.close());
  const reader = await mqtt.connectAsync(broker.url, { clientId: `dead-reader-${options.clientId}` });
  cleanup.push(() => reader.endAsync(true));
  const dead: Array<{ status: string }> = [];
  reader.on('message', (_t, p) => dead.push(JSON.parse(p.toString()) as { status: string }));
  await reader.subscribeAsync(DEAD, { qos: 1 });
  await ingest.start();
  const publisher = await mqtt.connectAsync(broker.url, { clientId: `terminal-${options.clientId}` });
  cleanup.push(() => publisher.endAsync(true));
  // The subscription goes out on connect: wait until the broker delivers to the ingest.
  for (let i = 0; ingest.metrics.received === 0; i++) {
    if (i > 100) throw new Error('the ingest never received a message');
    await publisher.publishAsync('attendance/plant/gate-1/events', punch(`warm-${i}`, 'E0'), { qos: 1 });
    await new Promise((r) => setTimeout(r, 30));
  }
  await until(
    'warm-up accepted and acknowledged',
    () =>
      ingest.pendingCount === 0 && ingest.metrics.received === ingest.metrics.accepted && broker.acks.length === ingest.metrics.received,
    8000,
  );
  return { ingest, publisher, acks: broker.acks, dead };
}

describe('Ingest', () => {
  it('delivers a punch, drops its repeat, dead-letters a refused event and a message that is not a punch, and acknowledges each', async () => {
    const api = fakeApi();
    const { ingest, publisher, acks, dead } = await setUp(api);
    const before = { received: ingest.metrics.received, accepted: ingest.metrics.accepted, acks: acks.length, batches: api.batches.length };
    const topic = 'attendance/plant/gate-1/events';
    await publisher.publishAsync(topic, punch('P1', 'E1'), { qos: 1 });
    await until('P1 accepted', () => ingest.metrics.accepted === before.accepted + 1, 8000);
    await publisher.publishAsync(topic, punch('P1', 'E1'), { qos: 1 });
    await publisher.publishAsync(topic, punch('P2', 'GONE'), { qos: 1 });
    await publisher.publishAsync(topic, 'not a punch', { qos: 1 });
    await until('every message acknowledged', () => acks.length === before.acks + 4, 8000);
    await until('both dead letters read', () => dead.length === 2, 8000);
    expect(ingest.metrics.received).toBe(before.received + 4);
    expect(ingest.metrics.accepted).toBe(before.accepted + 1);
    expect(ingest.metrics.duplicates).toBe(1);
    expect(dead.map((d) => d.status).sort()).toEqual(['INVALID_PAYLOAD', 'USER_NOT_AVAILABLE']);
    expect(
      api.batches
        .slice(before.batches)
        .flat()
        .map((e) => e.employeeCode),
    ).toEqual(['E1', 'GONE']);
    expect(ingest.pendingCount).toBe(0);
    const text = await ingest.metrics.render({ pending: 0, oldestPendingSec: 0, connectionsUp: 1, connections: 1 });
    expect(text).toMatch(/^ingest_dead_letters_total\{status="USER_NOT_AVAILABLE"\} 1$/m);
    await ingest.stop();
    expect(ingest.connectionsUp).toBe(0);
  });

  it('holds the acknowledgement while the API is down and sends it once the retried batch is accepted', async () => {
    const api = fakeApi(0);
    const { ingest, publisher, acks } = await setUp(api);
    const failing = fakeApi(2);
    api.addEvents = failing.addEvents;
    const ackedBefore = acks.length;
    await publisher.publishAsync('attendance/plant/gate-1/events', punch('Q1', 'E2'), { qos: 1 });
    await until('two failed requests', () => ingest.metrics.apiFailures === 2, 8000);
    expect(acks.length).toBe(ackedBefore);
    expect(ingest.pendingCount).toBe(1);
    await until('accepted on the third request', () => ingest.metrics.accepted > 0 && ingest.pendingCount === 0, 8000);
    await until('then acknowledged', () => acks.length === ackedBefore + 1, 8000);
    expect(failing.batches.flat().map((e) => e.employeeCode)).toEqual(['E2']);
  });
});
