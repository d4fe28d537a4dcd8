import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { nextMessage } from '../helpers/mqtt.js';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { startSimulatedModule, stopChild, terminalDir } from '../helpers/agent.js';
import { has } from '../helpers/system.js';
import { until } from '../helpers/poll.js';
import { signedRequest } from '../../src/ops/ops-client.js';

/** A data folder whose secrets hold the site's ops key. */
function dataWithOpsKey(opsKey: Buffer): string {
  const data = mkdtempSync(join(tmpdir(), 'agent-ops-'));
  writeFileSync(join(data, 'secrets.yaml'), `opsKey: ${opsKey.toString('hex')}\n`, { mode: 0o600 });
  return data;
}

let broker: TestBroker;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await broker.stop();
});

describe('edge-agent run against a real broker', () => {
  it('publishes a retained online state and metrics, answers signed commands with the same transaction, refuses unsigned ones, and is lost after SIGKILL', async () => {
    const opsKey = randomBytes(32);
    const data = dataWithOpsKey(opsKey);
    const child = spawnCli(
      ['run', '--data', data, '--terminal', 'gate-7', '--site', 'plant-a', '--mqtt', broker.url, '--upstream', 'mqtt'],
      { env: { EDGE_AGENT_OPS__METRICS_INTERVAL_SEC: '1' } },
    );
    try {
      await waitForLine(child, /edge-agent running/, 30_000);
      expect(await nextMessage(broker.url, 'attendance/plant-a/gate-7/state', (s) => s === 'online')).toBe('online');
      const metrics = JSON.parse(await nextMessage(broker.url, 'attendance/plant-a/gate-7/metrics', () => true));
      expect(metrics.queue).toMatchObject({ pending: 0, dead: 0 });
      expect(metrics.system.rssMb).toBeGreaterThan(0);
      expect(metrics).toHaveProperty('identification');
      const info = JSON.parse(await nextMessage(broker.url, 'attendance/plant-a/gate-7/info', () => true));
      expect(info).toMatchObject({ terminal: 'gate-7', site: 'plant-a' });

      const client = await mqtt.connectAsync(broker.url);
      const answers: Array<Record<string, unknown>> = [];
      client.on('message', (_t, m) => answers.push(JSON.parse(m.toString())));
      await client.subscribeAsync('attendance/plant-a/gate-7/res/+', { qos: 1 });
      const base = { prefix: 'attendance', site: 'plant-a', terminal: 'gate-7' };
      const signed = (command: string, transaction: string) =>
        signedRequest({ base, command, args: {}, key: opsKey, kid: 'site', transaction, ts: Date.now() });
      await client.publishAsync('attendance/plant-a/gate-7/req/ping', signed('ping', 'tx-4242'), { qos: 1 });
      await client.publishAsync('attendance/plant-a/gate-7/req/queue-status', signed('queue-status', 'tx-q'), { qos: 1 });
      await client.publishAsync('attendance/plant-a/gate-7/req/self-destruct', signed('self-destruct', 'tx-x'), { qos: 1 });
      await client.publishAsync('attendance/plant-a/gate-7/req/ping', 'not json', { qos: 1 });
      // The same read-only ping without a signature, and one signed for another terminal: refused.
      await client.publishAsync('attendance/plant-a/gate-7/req/ping', JSON.stringify({ transaction: 'tx-unsigned' }), { qos: 1 });
      await client.publishAsync(
        'attendance/plant-a/gate-7/req/ping',
        signedRequest({
          base: { ...base, terminal: 'gate-8' },
          command: 'ping',
          args: {},
          key: opsKey,
          kid: 'site',
          transaction: 'tx-elsewhere',
          ts: Date.now(),
        }),
        { qos: 1 },
      );
      const deadline = Date.now() + 10_000;
      while (answers.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await client.endAsync();
      expect(answers.find((a) => a.transaction === 'tx-4242')).toMatchObject({ status: 'ok', result: { pong: true, terminal: 'gate-7' } });
      expect(answers.find((a) => a.transaction === 'tx-q')).toMatchObject({ status: 'ok', result: { pending: 0 } });
      expect(answers.find((a) => a.transaction === 'tx-x')).toMatchObject({ status: 'error', error: { code: 'OPS_UNKNOWN_COMMAND' } });
      expect(answers.find((a) => a.transaction === null)).toMatchObject({ status: 'error', error: { code: 'OPS_BAD_REQUEST' } });
      expect(answers.find((a) => a.transaction === 'tx-unsigned')).toMatchObject({
        status: 'error',
        error: { code: 'OPS_UNAUTHENTICATED' },
      });
      expect(answers.find((a) => a.transaction === 'tx-elsewhere')).toMatchObject({
        status: 'error',
        error: { code: 'OPS_UNAUTHENTICATED' },
      });

      child.kill('SIGKILL');
      expect(await nextMessage(broker.url, 'attendance/plant-a/gate-7/state', (s) => s === 'lost')).toBe('lost');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses a captured signed restart replayed after the restart it caused, and after a new process on the same data: the agent does not restart again', async () => {
    const opsKey = randomBytes(32);
    const data = dataWithOpsKey(opsKey);
    const args = ['run', '--data', data, '--terminal', 'gate-r', '--site', 'plant-r', '--mqtt', broker.url, '--upstream', 'mqtt'];
    const topic = (leaf: string) => `attendance/plant-r/gate-r/${leaf}`;
    // The attacker: anonymous on the broker, it sees the operator's request go by and keeps its bytes.
    const attacker = await mqtt.connectAsync(broker.url);
    const captured: Buffer[] = [];
    const answers: Array<{ transaction: string; status: string; error?: { code: string; message: string } }> = [];
    const states: string[] = [];
    attacker.on('message', (t, m) => {
      if (t === topic('req/restart')) captured.push(Buffer.from(m));
      else if (t === topic('res/restart')) answers.push(JSON.parse(m.toString()));
      else if (t === topic('state')) states.push(m.toString());
    });
    await attacker.subscribeAsync([topic('req/#'), topic('res/restart'), topic('state')], { qos: 1 });
    /** Counts the lines of a child matching `re` over its whole life. */
    const counting = (child: ReturnType<typeof spawnCli>, re: RegExp) => {
      const seen = { n: 0 };
      let rest = '';
      child.stderr!.on('data', (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop()!;
        seen.n += lines.filter((l) => re.test(l)).length;
      });
      return seen;
    };
    /** A live "online" after `from` states had been seen: the agent is subscribed again. */
    const onlineAfter = (from: number) => until('online again', () => states.slice(from).includes('online'), 30_000);
    let child = spawnCli(args);
    try {
      let starts = counting(child, /^edge-agent running/);
      let restarts = counting(child, /^restart requested/);
      await until('the first start', () => starts.n === 1, 30_000);
      await onlineAfter(0);

      // The operator restarts the terminal once, signed and in its window.
      const operator = await mqtt.connectAsync(broker.url);
      const request = signedRequest({
        base: { prefix: 'attendance', site: 'plant-r', terminal: 'gate-r' },
        command: 'restart',
        args: {},
        key: opsKey,
        kid: 'site',
        transaction: 'tx-restart-1',
        ts: Date.now(),
      });
      let mark = states.length;
      await operator.publishAsync(topic('req/restart'), request, { qos: 1 });
      await operator.endAsync();
      await until('the answer', () => answers.length === 1, 10_000);
      expect(answers[0]).toMatchObject({ transaction: 'tx-restart-1', status: 'ok' });
      await until('the restart', () => starts.n === 2, 30_000);
      await onlineAfter(mark);
      expect(restarts.n).toBe(1);
      expect(captured).toHaveLength(1);
      expect(captured[0]!.equals(Buffer.from(request))).toBe(true);

      // Replayed into the agent the restart started: refused, and it runs on.
      await attacker.publishAsync(topic('req/restart'), captured[0]!, { qos: 1 });
      await until('the answer to the replay', () => answers.length === 2, 10_000);
      expect(answers[1]).toMatchObject({
        transaction: 'tx-restart-1',
        status: 'error',
        error: { code: 'OPS_UNAUTHENTICATED', message: expect.stringContaining('replay') },
      });
      await new Promise((r) => setTimeout(r, 1500)); // a restart would have begun 300 ms after its answer
      expect(restarts.n).toBe(1);
      expect(starts.n).toBe(2);

      // A new process on the same data folder (a reboot, systemd's restart): refused again.
      expect(await stopChild(child)).toBe(0);
      mark = states.length;
      child = spawnCli(args);
      starts = counting(child, /^edge-agent running/);
      restarts = counting(child, /^restart requested/);
      await until('the new process', () => starts.n === 1, 30_000);
      await onlineAfter(mark);
      await attacker.publishAsync(topic('req/restart'), captured[0]!, { qos: 1 });
      await until('the answer to the second replay', () => answers.length === 3, 10_000);
      expect(answers[2]).toMatchObject({ status: 'error', error: { code: 'OPS_UNAUTHENTICATED' } });
      await new Promise((r) => setTimeout(r, 1500));
      expect(restarts.n).toBe(0);
      expect(starts.n).toBe(1);
    } finally {
      await attacker.endAsync();
      await stopChild(child);
    }
  }, 120_000);

  it('says offline on a clean stop', async () => {
    const data = mkdtempSync(join(tmpdir(), 'agent-ops-'));
    const child = spawnCli([
      'run',
      '--data',
      data,
      '--terminal',
      'gate-8',
      '--site',
      'plant-a',
      '--mqtt',
      broker.url,
      '--upstream',
      'mqtt',
    ]);
    await waitForLine(child, /edge-agent running/, 30_000);
    expect(await nextMessage(broker.url, 'attendance/plant-a/gate-8/state', (s) => s === 'online')).toBe('online');
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await nextMessage(broker.url, 'attendance/plant-a/gate-8/state', () => true)).toBe('offline');
  });
});

describe.skipIf(!has('socat'))('a scanner unplugged and plugged back, as operations see it (needs socat)', () => {
  it('degraded with the scanner and its error while it is gone; healthy, with no stale error, once it is back; fleet --check says so', async () => {
    const sim = await startSimulatedModule();
    const dir = terminalDir();
    const child = spawnCli(
      [
        'run',
        '--data',
        dir.dataDir,
        '--terminal',
        'gate-u',
        '--site',
        'plant-u',
        '--mqtt',
        broker.url,
        '--upstream',
        'mqtt',
        '--scanner',
        `r30x:${sim.device}:57600`,
      ],
      { env: { EDGE_AGENT_OPS__METRICS_INTERVAL_SEC: '1' } },
    );
    const topic = 'attendance/plant-u/gate-u/metrics';
    /** The fields of a metrics message this test reads. */
    type Metrics = { health: string; scanners?: { status: string }[]; degraded: string[]; lastError: string | null; lastErrorAt: string };
    const metrics = async (ok: (m: Metrics) => boolean) =>
      JSON.parse(await nextMessage(broker.url, topic, (s) => ok(JSON.parse(s) as Metrics), 30_000)) as Metrics;
    const check = () => runCli(['fleet', '--check', '--mqtt', broker.url, '--site', 'plant-u']);
    try {
      await waitForLine(child, /edge-agent running/, 30_000);
      const ready = await metrics((m) => m.health === 'ok' && m.scanners?.[0]?.status === 'ready');
      expect(ready).toMatchObject({ degraded: [], lastError: null, lastErrorAt: null });

      expect(await sim.send('fault unplug on')).toBe('ok: fault unplug on');
      const gone = await metrics((m) => m.health === 'degraded' && m.scanners?.[0]?.status !== 'ready' && typeof m.lastError === 'string');
      expect(gone.degraded[0]).toMatch(new RegExp(`^scanner r30x:${sim.device} (disconnected|connecting)$`));
      expect(gone.lastError).toMatch(/^AGENT_SCANNER_DISCONNECTED: /);
      expect(Date.parse(gone.lastErrorAt)).toBeGreaterThan(Date.now() - 60_000);
      const bad = await check();
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/gate-u +degraded .*r30x:\S+ (disconnected|connecting)/);
      expect(bad.stdout).toMatch(/^CRITICAL: 1 of 1 terminal\(s\) lost or degraded: plant-u\/gate-u degraded: scanner r30x:/m);

      expect(await sim.send('fault unplug off')).toBe('ok: fault unplug off');
      const back = await metrics((m) => m.health === 'ok' && m.scanners?.[0]?.status === 'ready');
      expect(back).toMatchObject({ degraded: [], lastError: null, lastErrorAt: null });
      const good = await check();
      expect(good.code, good.stdout).toBe(0);
      expect(good.stdout).toMatch(/gate-u +online .* 1\/1 ready/);
    } finally {
      await stopChild(child);
      await sim.stop();
    }
  }, 120_000);
});
