// `edge-agent fleet` against a real broker holding a fleet's retained state, info and metrics
// (the simulated fleet of test/bench/console-fleet-publisher.ts): the first view comes once every retained
// message is delivered and says so; --watch prints a JSON line per terminal change, never the
// fleet again; a broker that drops the monitor's marker (an ACL) makes the first view say it gave
// up and how many terminals had arrived.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { freePort, startBroker, type TestBroker } from '../helpers/broker.js';
import { has, needs, which } from '../helpers/system.js';
import { simulatedFleet, terminalName as simulatedName } from '../bench/console-fleet-publisher.js';

/** Sites of 100 terminals. */
const terminalName = (i: number) => simulatedName(i, 100);

/** Publishes the retained state, info and metrics of `terminals` simulated terminals. */
async function publishFleet(url: string, o: { prefix: string; terminals: number }): Promise<void> {
  const fleet = await simulatedFleet({ url, prefix: o.prefix, terminals: o.terminals, perSite: 100 });
  await fleet.publishAll();
  await fleet.close();
}

/** More retained messages than Mosquitto queues per client at QoS 1 (max_queued_messages 1000). */
const TERMINALS = 600;

describe('edge-agent fleet', () => {
  let broker: TestBroker;
  beforeAll(async () => {
    broker = await startBroker();
    await publishFleet(broker.url, { prefix: 'fl', terminals: TERMINALS });
  }, 60_000);
  afterAll(async () => {
    await broker?.stop();
  });

  it('shows every terminal once every retained message has arrived, and says so (JSON and text)', async () => {
    const json = await runCli(['fleet', '--json', '--mqtt', broker.url, '--prefix', 'fl'], { timeoutMs: 90_000 });
    expect(json.code, json.stderr).toBe(0);
    const view = JSON.parse(json.stdout) as {
      terminals: Array<{ site: string; terminal: string; state: string; queueDepth: number; version: string }>;
      complete: boolean;
      retained: number;
      waitedMs: number;
    };
    expect(view.complete).toBe(true);
    expect(view.retained).toBe(3 * TERMINALS);
    expect(view.terminals).toHaveLength(TERMINALS);
    expect(view.terminals.find((t) => t.terminal === terminalName(123).terminal && t.site === terminalName(123).site)).toMatchObject({
      state: 'online',
      version: '0.1.0',
    });
    const text = await runCli(['fleet', '--mqtt', broker.url, '--prefix', 'fl', '--site', 'site-002'], { timeoutMs: 90_000 });
    expect(text.stdout).toMatch(/^SITE +TERMINAL +STATE/);
    expect(text.stdout).toMatch(/\(100 terminal\(s\); every retained message delivered, 300 in [0-9.]+ s\)/);
    const bad = await runCli(['fleet', '--mqtt', broker.url, '--wait', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/CLI_USAGE: --wait takes a number of seconds of at least 1/);
  }, 180_000);

  it('--watch --json: a line per terminal change, only that terminal, after the first view; SIGTERM ends it', async () => {
    const child = spawnCli(['fleet', '--watch', '--json', '--mqtt', broker.url, '--prefix', 'fl']);
    try {
      const lines: string[] = [];
      let buf = '';
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString('utf8');
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          lines.push(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      });
      await until(() => lines.length >= 1, 60_000);
      const first = JSON.parse(lines[0]!) as { terminals: Array<{ site: string; terminal: string; queueDepth: number; dead: number }> };
      expect(first.terminals).toHaveLength(TERMINALS);
      const pub = await mqtt.connectAsync(broker.url);
      const { site, terminal } = terminalName(42);
      await pub.publishAsync(`fl/${site}/${terminal}/state`, 'offline', { qos: 1, retain: true });
      // A heartbeat of another terminal: new `at`, same queue: nothing to print.
      const other = terminalName(7);
      const seen = first.terminals.find((t) => t.site === other.site && t.terminal === other.terminal)!;
      await pub.publishAsync(
        `fl/${other.site}/${other.terminal}/metrics`,
        JSON.stringify({
          at: new Date().toISOString(),
          queue: { pending: seen.queueDepth, dead: seen.dead, delivered: 99_999, oldestPendingAgeSec: 12 },
        }),
        { qos: 1, retain: true },
      );
      await pub.publishAsync(`fl/${site}/${terminal}/state`, 'online', { qos: 1, retain: true });
      await until(() => lines.length >= 3, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      await pub.endAsync();
      const changes = lines
        .slice(1)
        .map((l) => JSON.parse(l) as { terminal: { site: string; terminal: string; state: string }; changed: string[] });
      expect(changes.map((c) => [`${c.terminal.site}/${c.terminal.terminal}`, c.terminal.state, c.changed])).toEqual([
        [`${site}/${terminal}`, 'offline', ['status']],
        [`${site}/${terminal}`, 'online', ['status']],
      ]);
      const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});

describe('edge-agent fleet and what terminals publish', () => {
  it('prints no escape sequence or control character from the wire (lastError, version), in text, --check and --watch', async () => {
    const broker = await startBroker();
    try {
      const hostile = '\x1b]0;pwned\x07\x1b[2J\x1b[31mscanner\x1b[0m gone\x9b2J\r\u202e';
      const pub = await mqtt.connectAsync(broker.url);
      // Names come from the topic, where brokers refuse control characters (MQTT: "SHOULD NOT"; Mosquitto
      // drops the client): what can carry them is the payload.
      const base = 'esc/plant/gate-1';
      await pub.publishAsync(`${base}/state`, 'online', { qos: 1, retain: true });
      await pub.publishAsync(`${base}/info`, JSON.stringify({ at: new Date().toISOString(), version: '1.0\x1b[8m' }), {
        qos: 1,
        retain: true,
      });
      const metrics = (lastError: string) =>
        JSON.stringify({
          at: new Date().toISOString(),
          queue: { pending: 1, dead: 0, delivered: 0, oldestPendingAgeSec: 1 },
          lastError,
          lastErrorAt: new Date().toISOString(),
        });
      await pub.publishAsync(`${base}/metrics`, metrics(hostile), { qos: 1, retain: true });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the assertion is about control characters
      const controls = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/;
      const text = await runCli(['fleet', '--mqtt', broker.url, '--prefix', 'esc']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain('scanner gone');
      expect(text.stdout).toMatch(/plant +gate-1/);
      expect(text.stdout).not.toMatch(controls);
      const check = await runCli(['fleet', '--check', '--mqtt', broker.url, '--prefix', 'esc']);
      expect(check.stdout).toContain('scanner gone');
      expect(check.stdout).not.toMatch(controls);
      const json = await runCli(['fleet', '--json', '--mqtt', broker.url, '--prefix', 'esc']);
      expect(json.stdout).not.toMatch(controls);
      expect((JSON.parse(json.stdout) as { terminals: Array<{ lastError: string }> }).terminals[0]!.lastError).toBe(hostile);
      // A change while watching: the line printed for it is stripped too.
      const child = spawnCli(['fleet', '--watch', '--mqtt', broker.url, '--prefix', 'esc']);
      try {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString('utf8');
        });
        await until(() => out.includes('scanner gone'), 60_000);
        await pub.publishAsync(`${base}/metrics`, metrics('\x1b]0;again\x07reader\x1b[2J lost'), { qos: 1, retain: true });
        // A change line quotes a value with spaces as JSON, which escapes what is left of the controls.
        await until(() => /reader.* lost/.test(out), 30_000);
        expect(out).not.toMatch(controls);
      } finally {
        child.kill('SIGTERM');
      }
      await pub.endAsync();
    } finally {
      await broker.stop();
    }
  }, 120_000);
});

describe.skipIf(!has('mosquitto'))(`edge-agent fleet on a broker that drops its marker (${needs('mosquitto')})`, () => {
  let proc: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-acl-'));
    chmodSync(dir, 0o755);
    // Started as root, mosquitto reads its ACL file as the mosquitto user, who cannot enter the test's 0700 sandbox.
    const asRoot = process.getuid?.() === 0 ? 'user root\n' : '';
    const port = await freePort();
    // Anonymous clients may read the fleet and write terminal topics only: the marker is dropped.
    writeFileSync(
      join(dir, 'acl'),
      [
        'topic read fl/#',
        'topic write fl/+/+/state',
        'topic write fl/+/+/info',
        'topic write fl/+/+/metrics',
        'topic write fl/_publisher/#',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      `${asRoot}listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nacl_file ${join(dir, 'acl')}\n`,
    );
    proc = spawn(which('mosquitto')!, ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' });
    url = `mqtt://127.0.0.1:${port}`;
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const s = connect(port, '127.0.0.1');
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
        }),
      10_000,
    );
    await publishFleet(url, { prefix: 'fl', terminals: 50 });
  }, 60_000);
  afterAll(() => {
    proc?.kill('SIGKILL');
  });

  it('says it gave up, after how long, and how many terminals had arrived', async () => {
    const r = await runCli(['fleet', '--mqtt', url, '--prefix', 'fl', '--wait', '1'], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /\(gave up waiting after 1\.[0-9] s: 50 terminal\(s\) and 150 retained message\(s\) had arrived; more may follow\)/,
    );
    const json = JSON.parse(
      (await runCli(['fleet', '--json', '--mqtt', url, '--prefix', 'fl', '--wait', '1'], { timeoutMs: 60_000 })).stdout,
    ) as { complete: boolean; terminals: unknown[] };
    expect(json.complete).toBe(false);
    expect(json.terminals).toHaveLength(50);
    // Without --wait the quiet rule ends the wait: nothing retained came for 2 s.
    const quiet = JSON.parse((await runCli(['fleet', '--json', '--mqtt', url, '--prefix', 'fl'], { timeoutMs: 60_000 })).stdout) as {
      complete: boolean;
      waitedMs: number;
    };
    expect(quiet.complete).toBe(true);
    expect(quiet.waitedMs).toBeGreaterThanOrEqual(2000);
  }, 120_000);
});

async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
