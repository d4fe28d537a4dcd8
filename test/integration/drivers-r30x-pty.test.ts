// The R30x driver and simulator over a real pseudo-terminal made by socat: every command, a
// paced transfer, the host baud check, and unplugging in the middle of UpImage.
import { afterAll, describe, expect, it } from 'vitest';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { SerialTransport } from '../../drivers/transport/serial-transport.js';
import { R30xSimulator } from '../../drivers/r30x/simulator.js';
import { R30xScanner } from '../../drivers/r30x/scanner.js';
import { IMAGE_BYTES } from '../../drivers/r30x/protocol.js';
import { isAgentError } from '../../src/core/errors.js';
import { mkdtempSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScannerInfo } from '../../drivers/scanner.js';
import { r30xCommandSuite, testImage } from '../unit/drivers/r30x/r30x-command-suite.js';

interface PtyRig {
  pair: PtyPair;
  simulator: R30xSimulator;
  scanner: R30xScanner;
  host: SerialTransport;
  close(): Promise<void>;
}

async function ptyRig(options: { baud: number; pacing: boolean; timeoutMs?: number; model?: 'R503' | 'R307' }): Promise<PtyRig> {
  const pair = await createPtyPair();
  const device = new SerialTransport({ path: pair.b, baud: options.baud });
  await device.open();
  const simulator = new R30xSimulator(device, { baud: options.baud, pacing: options.pacing, imageSource: testImage, model: options.model ?? 'R503' });
  const host = new SerialTransport({ path: pair.a, baud: options.baud, watchdogMs: 50 });
  const scanner = new R30xScanner(host, { baud: options.baud, timeoutMs: options.timeoutMs ?? 300, pollMs: 20, reconnect: false });
  await scanner.open();
  return {
    pair,
    simulator,
    scanner,
    host,
    close: async () => {
      await scanner.close();
      await simulator.close();
      await pair.close();
    },
  };
}

// Correctness over the pty at 115200 baud, unpaced so the suite stays fast; pacing is measured by
// the benchmark and exercised below.
r30xCommandSuite('over a socat pty at 115200 baud', async () => {
  const rig = await ptyRig({ baud: 115200, pacing: false });
  return { scanner: rig.scanner, simulator: rig.simulator, close: rig.close };
});

describe('R30x over a pty, paced at the baud rate', () => {
  const rigs: PtyRig[] = [];
  afterAll(async () => {
    for (const r of rigs) await r.close().catch(() => undefined);
  });

  it('moves a whole image paced at 115200 baud, byte for byte', async () => {
    const rig = await ptyRig({ baud: 115200, pacing: true });
    rigs.push(rig);
    rig.simulator.present(9);
    await rig.scanner.driver.genImg();
    const img = await rig.scanner.driver.upImage();
    expect(img.raw.length).toBe(IMAGE_BYTES);
    const want = testImage(9, 1).pixels;
    for (let i = 0; i < 2000; i++) expect(img.pixels[i]).toBe((want[i]! >> 4) * 17);
  });

  it('switches the module and the port to another baud rate with WriteReg', async () => {
    const rig = await ptyRig({ baud: 57600, pacing: true });
    rigs.push(rig);
    await rig.scanner.driver.setBaud(115200);
    expect(rig.simulator.baud).toBe(115200);
    expect(rig.host.baud).toBe(115200);
    expect((await rig.scanner.driver.readSystemParameters()).baud).toBe(115200);
  });

  it('unplugging in the middle of UpImage fails with TRANSPORT_DISCONNECTED, not a hang or a timeout', async () => {
    // A long exchange timeout: only the disconnect can end this exchange early.
    const rig = await ptyRig({ baud: 115200, pacing: true, timeoutMs: 20_000 });
    rigs.push(rig);
    rig.simulator.present(3);
    await rig.scanner.driver.genImg();
    let received = 0;
    const disconnects: Error[] = [];
    rig.scanner.on('disconnect', (e) => disconnects.push(e));
    rig.host.on('data', (d) => {
      received += d.length;
      if (received > 8000 && received - d.length <= 8000) void rig.pair.close(); // pull the cable
    });
    const t0 = performance.now();
    const err = await rig.scanner.driver.upImage().then(() => null, (e: unknown) => e);
    const ms = performance.now() - t0;
    expect(isAgentError(err, 'TRANSPORT_DISCONNECTED'), String(err)).toBe(true);
    expect((err as { hint?: string }).hint).toMatch(/cable/);
    expect(received).toBeGreaterThan(8000);
    expect(received).toBeLessThan(IMAGE_BYTES);
    // Well inside the 20 s exchange timeout: the disconnect ended it.
    expect(ms).toBeLessThan(10_000);
    expect(disconnects).toHaveLength(1);
    const again = await rig.scanner.driver.templateCount().then(() => null, (e: unknown) => e);
    expect(isAgentError(again, 'TRANSPORT_DISCONNECTED')).toBe(true);
  });

  it('an R307 (no product info, no LED) still opens, reports its library and gives no LED feedback', async () => {
    const rig = await ptyRig({ baud: 115200, pacing: false, model: 'R307' });
    rigs.push(rig);
    const info = await rig.scanner.info();
    expect(info).toMatchObject({ family: 'r30x', model: 'R30x', capacity: 1000, firmware: null, baud: 115200, transport: 'serial' });
    expect(rig.scanner.capabilities.feedback).toBe(false);
    await rig.scanner.feedback('accepted');
    expect(rig.simulator.led).toBeNull();
  });

  it('reconnects by itself with backoff when the module is plugged back in', async () => {
    // The host opens a stable path (like /dev/serial/by-id/...) that we point at a new pty pair.
    const link = join(mkdtempSync(join(tmpdir(), 'replug-')), 'tty');
    let pair = await createPtyPair();
    symlinkSync(pair.a, link);
    const plugIn = async (p: PtyPair) => {
      const device = new SerialTransport({ path: p.b, baud: 115200 });
      await device.open();
      const sim = new R30xSimulator(device, { baud: 115200, pacing: false, imageSource: testImage, model: 'R503' });
      sim.enroll(9, 99);
      return sim;
    };
    let sim = await plugIn(pair);
    const scanner = new R30xScanner(new SerialTransport({ path: link, baud: 115200, watchdogMs: 50 }), { baud: 115200, timeoutMs: 300 });
    try {
      await scanner.open();
      const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
      const back = new Promise<ScannerInfo>((r) => scanner.once('reconnect', r));
      await sim.close();
      await pair.close();
      expect(isAgentError(await gone, 'TRANSPORT_DISCONNECTED')).toBe(true);
      unlinkSync(link);
      await new Promise((r) => setTimeout(r, 300)); // a few failed reopen attempts
      pair = await createPtyPair();
      sim = await plugIn(pair);
      symlinkSync(pair.a, link);
      const info = await back;
      expect(info).toMatchObject({ family: 'r30x', templates: 1, capacity: 200 });
      sim.present(99);
      expect(await scanner.searchOnModule()).toMatchObject({ slot: 9 });
    } finally {
      await scanner.close();
      await sim.close();
      await pair.close();
    }
  });
});
