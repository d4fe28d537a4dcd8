import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { captureOutput, childEnv, ROOT, waitForLine } from '../helpers/cli.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { nextMessage } from '../helpers/mqtt.js';
import { CommandRouter } from '../../src/ops/commands.js';
import { TerminalOps } from '../../src/ops/terminal-ops.js';
import { FleetMonitor } from '../../src/ops/fleet.js';
import { SiteTemplateSync, type SiteTemplateRecord, type SiteTemplateStore } from '../../src/site-sync/site-sync.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await broker.stop();
});


function makeOps(terminal: string, metrics: () => Record<string, unknown>) {
  const router = new CommandRouter().register('ping', () => ({ pong: true }));
  return new TerminalOps({
    url: broker.url,
    base: { prefix: 'att', site: 's1', terminal },
    info: () => ({ version: '9.9.9', clock: { synchronized: true } }),
    metrics,
    metricsIntervalMs: 200,
    router,
  });
}

describe('terminal ops over a real broker', () => {
  it('publishes a retained online state, info and metrics, answers ping, and says offline on a clean stop', async () => {
    const ops = makeOps('t1', () => ({ queue: { pending: 3, dead: 1, delivered: 7, oldestPendingAgeSec: 42 } }));
    await ops.start(5000);
    expect(ops.connected).toBe(true);
    expect(await nextMessage(broker.url, 'att/s1/t1/state')).toBe('online');
    expect(JSON.parse(await nextMessage(broker.url, 'att/s1/t1/info')).version).toBe('9.9.9');
    expect(JSON.parse(await nextMessage(broker.url, 'att/s1/t1/metrics')).queue.pending).toBe(3);

    const client = await mqtt.connectAsync(broker.url);
    const answer = new Promise<Record<string, unknown>>((resolve) => client.on('message', (_t, m) => resolve(JSON.parse(m.toString()))));
    await client.subscribeAsync('att/s1/t1/res/+');
    await client.publishAsync('att/s1/t1/req/ping', JSON.stringify({ transaction: 'tx-77' }), { qos: 1 });
    expect(await answer).toMatchObject({ transaction: 'tx-77', status: 'ok', result: { pong: true } });
    await client.endAsync();

    await ops.stop();
    expect(await nextMessage(broker.url, 'att/s1/t1/state')).toBe('offline');
  });

  it('leaves a retained lost state through the last will when the process is killed', async () => {
    const script = `
      import { TerminalOps } from './src/ops/terminal-ops.ts';
      import { CommandRouter } from './src/ops/commands.ts';
      const ops = new TerminalOps({ url: '${broker.url}', base: { prefix: 'att', site: 's1', terminal: 't2' }, info: () => ({}), metrics: () => ({}), metricsIntervalMs: 1000, router: new CommandRouter() });
      ops.on('connected', () => console.log('CONNECTED'));
      await ops.start();
    `;
    const child = captureOutput(spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
    await waitForLine(child, /CONNECTED/);
    expect(await nextMessage(broker.url, 'att/s1/t2/state')).toBe('online');
    child.kill('SIGKILL');
    expect(await nextMessage(broker.url, 'att/s1/t2/state', (s) => s === 'lost', 10_000)).toBe('lost');
  });

  it('shows every terminal in the fleet view', async () => {
    const ops = makeOps('t3', () => ({ queue: { pending: 5, dead: 2, delivered: 1, oldestPendingAgeSec: 9 }, lastError: 'API_TIMEOUT: no answer' }));
    await ops.start(5000);
    await nextMessage(broker.url, 'att/s1/t3/metrics');
    const fleet = new FleetMonitor({ prefix: 'att', site: 's1' });
    await fleet.start(broker.url);
    const t3 = fleet.terminals.find((t) => t.terminal === 't3');
    expect(t3).toMatchObject({ site: 's1', state: 'online', queueDepth: 5, dead: 2, oldestPendingAgeSec: 9, lastError: 'API_TIMEOUT: no answer', version: '9.9.9', clock: 'synchronized' });
    expect(t3?.lastSeen).toBeTruthy();
    await fleet.stop();
    await ops.stop();
  });
});

class MemoryStore implements SiteTemplateStore {
  readonly records = new Map<string, SiteTemplateRecord>();
  async versionOf(code: string) {
    const r = this.records.get(code);
    return r ? { updatedAt: r.updatedAt, origin: r.origin } : null;
  }
  async apply(record: SiteTemplateRecord) {
    this.records.set(record.employeeCode, record);
  }
  async remove(code: string) {
    const n = this.records.get(code)?.templates.length ?? 0;
    this.records.delete(code);
    return n;
  }
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('site template sync between two terminals', () => {
  it('applies a published record on the other terminal, keeps the newer one, and deletes everywhere', async () => {
    const key = randomBytes(32);
    const storeA = new MemoryStore();
    const storeB = new MemoryStore();
    const a = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'ta', key, store: storeA });
    const b = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'tb', key, store: storeB });
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 300));
    const record: SiteTemplateRecord = {
      v: 1, employeeCode: 'E/7', updatedAt: new Date().toISOString(), origin: 'ta',
      templates: [{ id: 'x1', modality: 'finger', position: 'right-index', format: 'iso19794-2', quality: 80, sensorModel: 'R307', createdAt: new Date().toISOString(), data: Buffer.from('tpl').toString('base64') }],
    };
    await storeA.apply(record);
    await a.publish(record);
    await until(() => storeB.records.has('E/7'));
    expect(storeB.records.get('E/7')?.templates[0]?.data).toBe(record.templates[0]!.data);

    // An older record from another terminal loses.
    const older = { ...record, updatedAt: new Date(Date.parse(record.updatedAt) - 60_000).toISOString(), origin: 'tz', templates: [] };
    await b.publish(older);
    await until(() => a.counters.skipped + b.counters.skipped >= 2);
    expect(storeB.records.get('E/7')?.origin).toBe('ta');
    expect(storeA.records.get('E/7')?.origin).toBe('ta');

    // The raw message on the broker does not hold the template in clear.
    const raw = await nextMessage(broker.url, 'att/sync/templates/E%2F7');
    expect(raw).not.toContain(record.templates[0]!.data);

    await a.publishDeletion('E/7');
    await until(() => !storeA.records.has('E/7') && !storeB.records.has('E/7'));

    // A terminal joining after the deletion sees nothing for that person.
    const storeC = new MemoryStore();
    const c = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'tc', key, store: storeC });
    await c.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(storeC.records.size).toBe(0);
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });

  it('refuses a record sealed under another site key and keeps running', async () => {
    const store = new MemoryStore();
    const a = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'keys', terminal: 'ta', key: randomBytes(32), store: new MemoryStore() });
    const b = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'keys', terminal: 'tb', key: randomBytes(32), store });
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 300));
    const errors: string[] = [];
    b.on('error', (e) => errors.push(e.error.code));
    await a.publish({ v: 1, employeeCode: 'E1', updatedAt: new Date().toISOString(), origin: 'ta', templates: [] });
    await until(() => errors.length > 0);
    expect(errors[0]).toBe('OPS_SYNC_WRONG_KEY');
    expect(store.records.size).toBe(0);
    await a.publishDeletion('E1');
    await Promise.all([a.stop(), b.stop()]);
  });
});

