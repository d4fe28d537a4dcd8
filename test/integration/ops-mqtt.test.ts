import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { captureOutput, childEnv, ROOT, waitForLine } from '../helpers/cli.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { nextMessage } from '../helpers/mqtt.js';
import { CommandRouter } from '../../src/ops/commands.js';
import { keyringOf, OpsAuthenticator } from '../../src/ops/ops-auth.js';
import { sendCommand, signedRequest } from '../../src/ops/ops-client.js';
import { TerminalOps } from '../../src/ops/terminal-ops.js';
import { FleetMonitor } from '../../src/ops/fleet.js';
import { SiteTemplateSync, type HeldVersion, type SiteTemplateRecord, type SiteTemplateStore } from '../../src/site-sync/site-sync.js';
import { publishChecked } from '../../src/upload/mqtt-publish.js';

let broker: TestBroker;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await broker.stop();
});

const OPS_KEY = randomBytes(32);
const verifier = (terminal: string) =>
  new OpsAuthenticator({ site: 's1', terminal, keyring: keyringOf({ opsKey: OPS_KEY, opsKeys: {} }), windowMs: 300_000 });

function makeOps(terminal: string, metrics: () => Record<string, unknown>) {
  const router = new CommandRouter(verifier(terminal)).register('ping', () => ({ pong: true }));
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
    const request = signedRequest({
      base: { prefix: 'att', site: 's1', terminal: 't1' },
      command: 'ping',
      args: {},
      key: OPS_KEY,
      kid: 'site',
      transaction: 'tx-77',
      ts: Date.now(),
    });
    await client.publishAsync('att/s1/t1/req/ping', request, { qos: 1 });
    expect(await answer).toMatchObject({ transaction: 'tx-77', status: 'ok', result: { pong: true } });
    await client.endAsync();
    // The operator's client: signs, sends, waits for the answer with its transaction.
    const viaClient = await sendCommand({
      url: broker.url,
      base: { prefix: 'att', site: 's1', terminal: 't1' },
      command: 'ping',
      args: {},
      key: OPS_KEY,
      kid: 'site',
      timeoutMs: 10_000,
    });
    expect(viaClient).toMatchObject({ status: 'ok', result: { pong: true } });
    const unsigned = await sendCommand({
      url: broker.url,
      base: { prefix: 'att', site: 's1', terminal: 't1' },
      command: 'ping',
      args: {},
      key: randomBytes(32),
      kid: 'site',
      timeoutMs: 10_000,
    });
    expect(unsigned).toMatchObject({ status: 'error', error: { code: 'OPS_UNAUTHENTICATED' } });

    await ops.stop();
    expect(await nextMessage(broker.url, 'att/s1/t1/state')).toBe('offline');
  });

  it('retains the newest info when a slow gather started first: publishes of a leaf go one at a time, in order', async () => {
    // On connect the agent gathers info while its scanner is still connecting; the scanner is
    // ready a moment later and asks again. The first gather, slower, used to publish last.
    let scanner = 'connecting';
    let calls = 0;
    const ops = new TerminalOps({
      url: broker.url,
      base: { prefix: 'att', site: 's1', terminal: 't-order' },
      info: async () => {
        const seen = scanner;
        if (++calls === 2) await new Promise((r) => setTimeout(r, 400));
        return { scanners: { sim: seen } };
      },
      metrics: () => ({}),
      metricsIntervalMs: 60_000,
      router: new CommandRouter(verifier('t-order')),
    });
    await ops.start(5000);
    try {
      const slow = ops.publishInfo();
      await new Promise((r) => setTimeout(r, 50));
      scanner = 'ready';
      await Promise.all([slow, ops.publishInfo()]);
      expect(calls).toBe(3);
      expect(JSON.parse(await nextMessage(broker.url, 'att/s1/t-order/info')).scanners).toEqual({ sim: 'ready' });
    } finally {
      await ops.stop();
    }
  });

  it('leaves a retained lost state through the last will when the process is killed', async () => {
    const script = `
      import { TerminalOps } from './src/ops/terminal-ops.ts';
      import { CommandRouter } from './src/ops/commands.ts';
      import { keyringOf, OpsAuthenticator } from './src/ops/ops-auth.ts';
      const verifier = new OpsAuthenticator({ site: 's1', terminal: 't2', keyring: keyringOf({ opsKey: null, opsKeys: {} }), windowMs: 60_000 });
      const ops = new TerminalOps({ url: '${broker.url}', base: { prefix: 'att', site: 's1', terminal: 't2' }, info: () => ({}), metrics: () => ({}), metricsIntervalMs: 1000, router: new CommandRouter(verifier) });
      ops.on('connected', () => console.log('CONNECTED'));
      await ops.start();
    `;
    const child = captureOutput(
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        env: childEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    await waitForLine(child, /CONNECTED/);
    expect(await nextMessage(broker.url, 'att/s1/t2/state')).toBe('online');
    child.kill('SIGKILL');
    expect(await nextMessage(broker.url, 'att/s1/t2/state', (s) => s === 'lost', 10_000)).toBe('lost');
  });

  it('shows every terminal in the fleet view', async () => {
    const ops = makeOps('t3', () => ({
      queue: { pending: 5, dead: 2, delivered: 1, oldestPendingAgeSec: 9 },
      lastError: 'API_TIMEOUT: no answer',
    }));
    await ops.start(5000);
    await nextMessage(broker.url, 'att/s1/t3/metrics');
    const fleet = new FleetMonitor({ prefix: 'att', site: 's1' });
    await fleet.start(broker.url);
    const t3 = fleet.terminals.find((t) => t.terminal === 't3');
    expect(t3).toMatchObject({
      site: 's1',
      state: 'online',
      queueDepth: 5,
      dead: 2,
      oldestPendingAgeSec: 9,
      lastError: 'API_TIMEOUT: no answer',
      version: '9.9.9',
      clock: 'synchronized',
    });
    expect(t3?.lastSeen).toBeTruthy();
    await fleet.stop();
    await ops.stop();
  });
});

/** A terminal's store in memory: records and the versions held (tombstones kept). */
class MemoryStore implements SiteTemplateStore {
  readonly records = new Map<string, SiteTemplateRecord>();
  readonly held = new Map<string, HeldVersion>();
  async versionOf(code: string) {
    return this.held.get(code) ?? null;
  }
  #above(r: SiteTemplateRecord, digest: string): boolean {
    const h = this.held.get(r.employeeCode);
    if (h && !(r.version > h.version || (r.version === h.version && h.digest === null))) return false;
    this.held.set(r.employeeCode, { version: r.version, deleted: r.deleted, digest });
    return true;
  }
  async apply(record: SiteTemplateRecord, digest: string) {
    if (!this.#above(record, digest)) return false;
    this.records.set(record.employeeCode, record);
    return true;
  }
  async remove(record: SiteTemplateRecord, digest: string) {
    if (!this.#above(record, digest)) return null;
    const n = this.records.get(record.employeeCode)?.templates.length ?? 0;
    this.records.delete(record.employeeCode);
    return n;
  }
  async note(record: SiteTemplateRecord, digest: string) {
    this.#above(record, digest);
  }
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function personRecord(employeeCode: string, version: number, origin: string, data = 'tpl'): SiteTemplateRecord {
  return {
    v: 2,
    employeeCode,
    version,
    updatedAt: new Date(version).toISOString(),
    origin,
    deleted: false,
    templates: [
      {
        id: `${employeeCode}-${version}`,
        modality: 'finger',
        position: 'right-index',
        format: 'iso19794-2',
        quality: 80,
        sensorModel: 'R307',
        createdAt: new Date(version).toISOString(),
        data: Buffer.from(data).toString('base64'),
      },
    ],
  };
}

describe('site template sync between two terminals', () => {
  it('applies a published record on the other terminal, refuses an older one, and deletes everywhere with a sealed tombstone that stays', async () => {
    const key = randomBytes(32);
    const storeA = new MemoryStore();
    const storeB = new MemoryStore();
    const a = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'ta', key, store: storeA });
    const b = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'tb', key, store: storeB });
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 300));
    const record = personRecord('E+7', Date.now(), 'ta');
    storeA.records.set('E+7', record); // enrolled on A
    await a.publish(record);
    await until(() => storeB.records.has('E+7'));
    expect(storeB.records.get('E+7')?.templates[0]?.data).toBe(record.templates[0]!.data);
    await until(() => a.counters.skipped === 1); // its own record back: a repeat
    expect(storeA.held.get('E+7')?.version).toBe(record.version);

    // An older record (another terminal, or a replay) is refused on both and changes nothing.
    await b.publish({ ...personRecord('E+7', record.version - 60_000, 'tz'), templates: [] });
    await until(() => a.counters.refused >= 1);
    expect(storeA.records.get('E+7')?.origin).toBe('ta');
    expect(storeB.held.get('E+7')?.version).toBe(record.version);

    // The raw message on the broker does not hold the template in clear; '+' is percent-encoded.
    const raw = await nextMessage(broker.url, 'att/sync/templates/E%2B7');
    expect(raw).not.toContain(record.templates[0]!.data);

    const { version } = await a.publishDeletion('E+7');
    expect(version).toBeGreaterThan(record.version);
    await until(() => !storeA.records.has('E+7') && !storeB.records.has('E+7'));
    expect(storeB.held.get('E+7')).toMatchObject({ version, deleted: true });

    // The tombstone stays retained, sealed: a terminal joining later applies it (and so refuses the old record).
    const storeC = new MemoryStore();
    storeC.records.set('E+7', record);
    storeC.held.set('E+7', { version: record.version, deleted: false, digest: 'x' });
    const c = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'sync', terminal: 'tc', key, store: storeC });
    await c.start();
    await until(() => c.counters.removed === 1);
    expect(storeC.records.size).toBe(0);
    expect(storeC.held.get('E+7')).toMatchObject({ version, deleted: true });
    const retained = await nextMessage(broker.url, 'att/sync/templates/E%2B7');
    expect(retained).not.toBe('');
    expect(JSON.parse(retained)).toMatchObject({ v: 1, alg: 'A256GCM' });
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });

  it('ignores a bare empty message and refuses a replayed old record', async () => {
    const key = randomBytes(32);
    const store = new MemoryStore();
    const sync = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'replay', terminal: 'ta', key, store });
    const station = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'replay', terminal: 'st', key, store: new MemoryStore() });
    await sync.start();
    await station.start();
    await new Promise((r) => setTimeout(r, 300));
    const old = personRecord('E1', Date.now() - 10_000, 'st', 'old');
    await station.publish(old);
    await until(() => store.records.has('E1'));
    const sealedOld = await nextMessage(broker.url, 'att/replay/templates/E1');
    await station.publish(personRecord('E1', Date.now(), 'st', 'new'));
    await until(() => store.records.get('E1')?.templates[0]?.data === Buffer.from('new').toString('base64'));

    const attacker = await mqtt.connectAsync(broker.url);
    await attacker.publishAsync('att/replay/templates/E1', Buffer.alloc(0), { qos: 1, retain: true });
    await until(() => sync.counters.refused === 1);
    expect(store.records.has('E1')).toBe(true);
    await attacker.publishAsync('att/replay/templates/E1', sealedOld, { qos: 1, retain: true });
    await until(() => sync.counters.refused === 2);
    expect(store.records.get('E1')?.templates[0]?.data).toBe(Buffer.from('new').toString('base64'));
    // A record under a topic that is not a valid employee code is an error, not a crash.
    await attacker.publishAsync('att/replay/templates/%2E%2E', sealedOld, { qos: 1 });
    await until(() => sync.counters.errors === 1);
    // Nor is a full-width look-alike of a code (the rule the service and the agent share).
    await attacker.publishAsync('att/replay/templates/Ｅ１', sealedOld, { qos: 1 });
    await until(() => sync.counters.errors === 2);
    expect([...store.records.keys()]).toEqual(['E1']);
    await attacker.endAsync();
    await Promise.all([sync.stop(), station.stop()]);
  });

  it('refuses a record sealed under another site key and keeps running', async () => {
    const store = new MemoryStore();
    const a = new SiteTemplateSync({
      url: broker.url,
      prefix: 'att',
      site: 'keys',
      terminal: 'ta',
      key: randomBytes(32),
      store: new MemoryStore(),
    });
    const b = new SiteTemplateSync({ url: broker.url, prefix: 'att', site: 'keys', terminal: 'tb', key: randomBytes(32), store });
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 300));
    const errors: string[] = [];
    b.on('error', (e) => errors.push(e.error.code));
    await a.publish({ ...personRecord('E1', Date.now(), 'ta'), templates: [] });
    await until(() => errors.length > 0);
    expect(errors[0]).toBe('OPS_SYNC_WRONG_KEY');
    expect(store.records.size).toBe(0);
    await a.publishDeletion('E1');
    await Promise.all([a.stop(), b.stop()]);
  });
});

describe("publishing within MQTT's limits", () => {
  it('refuses a 70,000-byte topic before mqtt.js stores it, and the client goes on publishing after a reconnect', async () => {
    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 200 });
    await expect(publishChecked(client, `att/s1/${'x'.repeat(70_000)}`, 'x', { qos: 1, retain: true })).rejects.toMatchObject({
      code: 'MQTT_PUBLISH_INVALID',
    });
    await expect(publishChecked(client, 'att/s1/big', Buffer.alloc(300 * 1024), { qos: 1 })).rejects.toMatchObject({
      code: 'MQTT_PUBLISH_INVALID',
    });
    // Nothing waits in mqtt.js's store to be written again on the reconnect path.
    await broker.stop();
    await broker.restart();
    await until(() => client.connected, 15_000);
    await publishChecked(client, 'att/s1/after', 'ok', { qos: 1 });
    expect(client.connected).toBe(true);
    await client.endAsync();
  });
});
