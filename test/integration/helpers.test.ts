import { describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { SerialPort } from 'serialport';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { createPtyPair } from '../helpers/pty.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killTree, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { descendants, procFile } from '../helpers/procs.js';
import { has } from '../helpers/system.js';

// The test harness itself: a real broker, a real PTY pair and the real CLI.
describe('test harness', () => {
  it('relays a retained message through aedes', async () => {
    await expectRelay(await startBroker({ prefer: 'aedes' }), 'aedes');
  });

  it('runs the CLI', async () => {
    const r = await runCli(['help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('version');
    const bad = await runCli(['no-such-command']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command');
  });
});

describe.skipIf(!has('mosquitto'))('test harness with Mosquitto (needs mosquitto)', () => {
  it('relays a retained message through mosquitto', async () => {
    await expectRelay(await startBroker(), 'mosquitto');
  });
});

describe.skipIf(!has('socat'))('test harness with socat PTYs (needs socat)', () => {
  it('moves bytes across a socat PTY pair', async () => {
    const pair = await createPtyPair();
    const a = new SerialPort({ path: pair.a, baudRate: 57600 });
    const b = new SerialPort({ path: pair.b, baudRate: 57600 });
    await Promise.all([new Promise((r) => a.once('open', r)), new Promise((r) => b.once('open', r))]);
    const got = new Promise<Buffer>((resolve) => b.once('data', resolve));
    a.write(Buffer.from([0xef, 0x01]));
    expect([...(await got)]).toEqual([0xef, 0x01]);
    await new Promise((r) => a.close(r));
    await new Promise((r) => b.close(r));
    await pair.close();
  });

  it('kills a child with what it started: a simulator with its socat', async () => {
    const sim = spawnCli(['simulate', 'r30x', '--link', join(mkdtempSync(join(tmpdir(), 'harness-')), 'tty')]);
    await waitForLine(sim, /^device: /, 20_000, 'stdout');
    const socat = descendants(sim.pid!).filter((p) => procFile(p, 'cmdline')?.startsWith('socat\0'));
    expect(socat).toHaveLength(1);
    const gone = new Promise((r) => sim.once('exit', r));
    killTree(sim);
    await gone;
    // SIGKILL is delivered at once; the orphaned socat is a zombie at most (its environ reads empty).
    await expect.poll(() => procFile(socat[0]!, 'environ') ?? '', { timeout: 5000 }).toBe('');
  });
});

async function expectRelay(broker: TestBroker, kind: TestBroker['kind']): Promise<void> {
  try {
    expect(broker.kind).toBe(kind);
    const pub = await mqtt.connectAsync(broker.url);
    await pub.publishAsync('t/x', 'hello', { retain: true, qos: 1 });
    const sub = await mqtt.connectAsync(broker.url);
    const got = new Promise<string>((resolve) => sub.on('message', (_t, m) => resolve(m.toString())));
    await sub.subscribeAsync('t/x');
    expect(await got).toBe('hello');
    await pub.endAsync();
    await sub.endAsync();
  } finally {
    await broker.stop();
  }
}
