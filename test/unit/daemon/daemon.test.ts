import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import type { DaemonComponent, DaemonContext } from '../../../src/daemon/component.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import { emptySecrets } from '../../../src/config/secrets.js';
import { MemorySink } from '../upload/memory-sink.fixture.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'daemon-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function until(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Daemon', () => {
  it('with no component still drains the outbox; components start in order and stop in reverse', async () => {
    const config = parseConfig({ dataDir: dir, terminal: { id: 'gate-7', mode: 'in' } });
    const sink = new MemorySink('api');
    const events: string[] = [];
    const component = (name: string): DaemonComponent => ({
      name,
      async start(ctx: DaemonContext) {
        events.push(`start ${name} ${ctx.config.terminal.id} ${typeof ctx.outbox.record} ${typeof ctx.policy.punch}`);
      },
      async stop() {
        events.push(`stop ${name}`);
      },
    });
    const bare = new Daemon({ config, secrets: emptySecrets(), sinks: [sink], idlePollMs: 10, clock: { sources: [] } });
    const ctx = await bare.start();
    const r = await ctx.policy.punch({ employeeCode: '1042', source: 'finger' });
    expect(r).toMatchObject({ recorded: true, direction: 'in' });
    await until(async () => (await ctx.outbox.status()).delivered === 1);
    expect(sink.accepted.map((a) => [a.employeeCode, a.terminalId])).toEqual([['1042', 'gate-7']]);
    await bare.stop();

    const daemon = new Daemon({ config, secrets: emptySecrets(), sinks: [new MemorySink('api')], clock: { sources: [] } });
    daemon.use(component('a')).use(component('b'));
    await daemon.start();
    await daemon.stop();
    expect(events).toEqual(['start a gate-7 function function', 'start b gate-7 function function', 'stop b', 'stop a']);
  });

  it('stops the recording components after the ones that punch: a punch taken while a component stops is recorded', async () => {
    const config = parseConfig({ dataDir: dir, terminal: { id: 'gate-7', mode: 'in' } });
    const sink = new MemorySink('api');
    const daemon = new Daemon({ config, secrets: emptySecrets(), sinks: [sink], idlePollMs: 10, clock: { sources: [] } });
    let last: { recorded: boolean } | null = null;
    let context: DaemonContext | null = null;
    daemon.use({
      name: 'scanner-like',
      async start(ctx) {
        context = ctx;
      },
      async stop() {
        // The database, the time authority, the policy and the uploader are all still there.
        last = await context!.policy.punch({ employeeCode: '55', source: 'finger' });
      },
    });
    await daemon.start();
    await daemon.stop();
    expect(last).toMatchObject({ recorded: true });
    // The database was closed after it: the punch is there for the next start, and is delivered.
    const again = new Daemon({ config, secrets: emptySecrets(), sinks: [sink], idlePollMs: 10, clock: { sources: [] } });
    const ctx = await again.start();
    await until(async () => (await ctx.outbox.status()).delivered === 1);
    expect(sink.accepted.map((a) => a.employeeCode)).toEqual(['55']);
    await again.stop();
  });

  it('refuses to start an api upstream without a URL or key, saying what is missing', async () => {
    const config = parseConfig({ dataDir: dir, upstream: ['api'] });
    await expect(new Daemon({ config, secrets: emptySecrets() }).start()).rejects.toMatchObject({
      code: 'CONFIG_MISSING',
      context: { key: 'api.url' },
    });
    const withUrl = parseConfig({ dataDir: dir, upstream: ['api'], api: { url: 'http://127.0.0.1:9' } });
    await expect(new Daemon({ config: withUrl, secrets: emptySecrets() }).start()).rejects.toMatchObject({
      code: 'CONFIG_MISSING',
      context: { key: 'apiKey' },
    });
  });
});

describe('clock and punch policy', () => {
  it('the daemon starts its time authority before anything else: punches are marked with its judgement', async () => {
    const config = parseConfig({ dataDir: dir, terminal: { id: 'gate-7', mode: 'in' } });
    let synced = false;
    const daemon = new Daemon({
      config,
      secrets: emptySecrets(),
      sinks: [new MemorySink('api')],
      clock: { detect: async () => ({ synchronized: synced, source: 'test', detail: 'test' }), tickMs: 60_000 },
    });
    const seen: string[] = [];
    daemon.use({
      name: 'first',
      start: async (ctx) => void seen.push(`judged ${ctx.time.judgement()?.source}`),
      stop: async () => undefined,
    });
    const ctx = await daemon.start();
    expect(seen).toEqual(['judged test']);
    const a = await ctx.policy.punch({ employeeCode: '1', source: 'finger' });
    synced = true;
    await ctx.time.check();
    const b = await ctx.policy.punch({ employeeCode: '2', source: 'finger' });
    // The first was corrected when the clock became trusted; the second was trusted when taken.
    expect(a.recorded && (await ctx.outbox.get(a.id))).toMatchObject({ clockSynced: false, clockCorrected: true });
    expect(b.recorded && (await ctx.outbox.get(b.id))).toMatchObject({ clockSynced: true });
    await daemon.stop();
  });
});

describe('a daemon that does not deliver', () => {
  it('needs no upstream, records punches and leaves their delivery rows for the real daemon', async () => {
    const config = parseConfig({ dataDir: dir, upstream: ['api'], terminal: { mode: 'in' } });
    const d = new Daemon({ config, secrets: emptySecrets(), deliver: false, clock: { sources: [] } });
    const ctx = await d.start();
    const r = await ctx.policy.punch({ employeeCode: '77', source: 'manual' });
    expect(r.recorded).toBe(true);
    await d.stop();
    const sink = new MemorySink('api');
    const real = new Daemon({ config, secrets: emptySecrets(), sinks: [sink], idlePollMs: 10, clock: { sources: [] } });
    const ctx2 = await real.start();
    await until(async () => (await ctx2.outbox.status()).delivered === 1);
    expect(sink.accepted.map((a) => a.employeeCode)).toEqual(['77']);
    await real.stop();
  });
});
