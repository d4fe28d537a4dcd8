// `edge-agent simulate` and `edge-agent devices` as a technician runs them: real processes, a real
// socat pty (where socat exists), the real driver on the other end.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { runCli, spawnCli, waitForLine, writeStdin } from '../helpers/cli.js';
import { createPtyPair } from '../helpers/pty.js';
import { openScanner } from '../../drivers/open-scanner.js';
import { has } from '../helpers/system.js';
import { exitOf, stopChild } from '../helpers/agent.js';

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) await stopChild(c);
});

async function simulate(args: string[]): Promise<{ child: ChildProcess; path: string; send(line: string): Promise<string> }> {
  const link = join(mkdtempSync(join(tmpdir(), 'devices-')), 'tty');
  const child = spawnCli(['simulate', ...args, '--link', link]);
  children.push(child);
  const [, path] = await waitForLine(child, /^device: (.+)$/, 20_000, 'stdout');
  return {
    child,
    path: path!,
    async send(line: string) {
      const reply = waitForLine(child, /^(ok|error): .*/, 5000, 'stdout');
      writeStdin(child, `${line}\n`);
      return (await reply)[0];
    },
  };
}

interface DevicesJson {
  devices: Array<{
    path: string;
    transport: string;
    family: string;
    model: string;
    firmware: string | null;
    capacity: number;
    templates: number;
    baud: number;
  }>;
}

describe.skipIf(!has('socat'))('edge-agent devices on simulated modules (needs socat)', () => {
  it('identifies a simulated R503 on a pty: family, model, capacity, templates, baud', async () => {
    const sim = await simulate(['r30x', '--enroll', '1:11,7:12']);
    expect(sim.path).toMatch(/tty$/);
    expect(await sim.send('enroll 42 13')).toBe('ok: enroll 42 13');
    const r = await runCli(['devices', '--port', sim.path, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as DevicesJson;
    expect(out.devices).toEqual([
      { path: sim.path, transport: 'serial', family: 'r30x', model: 'R503', firmware: '1.2', capacity: 200, templates: 3, baud: 57600 },
    ]);
  });

  it('finds the baud rate an R307 is set to (the module does not hear a probe at another speed)', async () => {
    const sim = await simulate(['r30x', '--baud', '19200', '--model', 'R307']);
    const r = await runCli(['devices', '--port', sim.path]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`${sim.path}  r30x  R30x  19200 baud  capacity 1000  templates 0`);
  });

  it('identifies a simulated GT-521 on a pty', async () => {
    const sim = await simulate(['gt521', '--enroll', '0:5']);
    const r = await runCli(['devices', '--port', sim.path, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const [d] = (JSON.parse(r.stdout) as DevicesJson).devices;
    expect(d).toMatchObject({ path: sim.path, transport: 'serial', family: 'gt521', baud: 9600, templates: 1 });
    expect(d!.capacity).toBeGreaterThan(0);
  });

  it('says plainly when nothing known answers on a port', async () => {
    const pair = await createPtyPair();
    try {
      const r = await runCli(['devices', '--port', pair.a]);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/nothing known answered \(tried r30x@57600, gt521@9600, .*\)/);
      // Badge readers are not probed (they say nothing until a card is read); the line says how to name one.
      expect(r.stdout).not.toMatch(/badge-serial@/);
      expect(r.stdout).toContain(`name it with --scanner badge-serial:${pair.a}`);
      const j = await runCli(['devices', '--port', pair.a, '--json', '--baud', '57600']);
      expect(JSON.parse(j.stdout)).toEqual({ devices: [] });
    } finally {
      await pair.close();
    }
  });
});

describe('edge-agent devices', () => {
  it('says plainly when the port does not exist', async () => {
    const missing = await runCli(['devices', '--port', '/dev/ttyUSB-not-here']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('TRANSPORT_NOT_FOUND');
  });

  it('refuses a bad flag with a usage error', async () => {
    const r = await runCli(['devices', '--baud', 'fast']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--baud');
  });
});

describe.skipIf(!has('socat'))('edge-agent simulate controls (needs socat)', () => {
  it('refuses a bad model or baud rate plainly and leaves no port behind', async () => {
    const link = join(mkdtempSync(join(tmpdir(), 'badsim-')), 'tty');
    const model = await runCli(['simulate', 'r30x', '--link', link, '--model', 'R999'], { timeoutMs: 20_000 });
    expect(model.code).toBe(1);
    expect(model.stderr).toContain('DRIVER_BAD_ARGUMENT');
    expect(model.stderr).toContain('R503');
    const baud = await runCli(['simulate', 'r30x', '--link', link, '--baud', '12345'], { timeoutMs: 20_000 });
    expect(baud.code).toBe(1);
    expect(baud.stderr).toMatch(/9600 × N/);
    expect(existsSync(link)).toBe(false);
  });

  it('presents a finger, searches through the real driver, unplugs and plugs back in', async () => {
    const sim = await simulate(['r30x', '--baud', '115200', '--enroll', '4:77']);
    const scanner = await openScanner({ family: 'r30x', path: sim.path, baud: 115200 });
    try {
      expect((await scanner.info()).templates).toBe(1);
      expect(await sim.send('finger 77')).toBe('ok: finger 77');
      expect(await scanner.searchOnModule()).toMatchObject({ slot: 4 });
      expect(await sim.send('finger 78')).toBe('ok: finger 78');
      expect(await scanner.searchOnModule()).toBeNull();
      expect(await sim.send('lift')).toBe('ok: lift');
      expect(await scanner.waitForPresence({ timeoutMs: 300 })).toBe(false);
      expect(await sim.send('fault low-quality on')).toBe('ok: fault low-quality on');
      await sim.send('finger 77');
      await expect(scanner.searchOnModule()).rejects.toMatchObject({ code: 'DRIVER_LOW_QUALITY' });
      await sim.send('fault low-quality off');
      expect(await sim.send('fault warp-drive on')).toMatch(/^error: .*warp-drive/);
      expect(await sim.send('jump')).toMatch(/^error: .*unknown control command/);
      const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
      const back = new Promise<unknown>((r) => scanner.once('reconnect', r));
      expect(await sim.send('fault unplug on')).toBe('ok: fault unplug on');
      expect(((await gone) as { code?: string }).code).toBe('TRANSPORT_DISCONNECTED');
      // Plugged back in at the same path: the scanner reopens by itself and the library is kept.
      expect(await sim.send('fault unplug off')).toBe('ok: fault unplug off');
      expect(await back).toMatchObject({ family: 'r30x', templates: 1 });
      await sim.send('finger 77');
      expect(await scanner.searchOnModule()).toMatchObject({ slot: 4 });
    } finally {
      await scanner.close();
    }
  });
});

describe('edge-agent simulate iris', () => {
  it('serves the iris camera in-process and captures through the real driver', async () => {
    const child = spawnCli(['simulate', 'iris']);
    children.push(child);
    await waitForLine(child, /^device: in-process .*\(iris-hid\)$/, 20_000, 'stdout');
    const say = async (line: string, re: RegExp) => {
      const reply = waitForLine(child, re, 10_000, 'stdout');
      writeStdin(child, `${line}\n`);
      return (await reply)[0];
    };
    expect(await say('eye 5', /^ok: eye 5$/)).toBe('ok: eye 5');
    expect(await say('capture', /^(ok|error): capture.*|^error: .*/)).toMatch(/^ok: capture 640x480 quality \d+$/);
    expect(await say('quit', /^ok: quit$/)).toBe('ok: quit');
    expect(await exitOf(child)).toBe(0);
  });
});
