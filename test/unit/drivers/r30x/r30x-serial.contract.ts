/**
 * The R30x driver and simulator over a serial line (the real SerialTransport on the host end):
 * every command, a paced transfer, a baud switch of module and port, unplugging in the middle of
 * UpImage and reconnecting. Written once, run over serialport's mock binding
 * (r30x-serial.test.ts) and over a real socat pty where socat exists
 * (test/integration/drivers-r30x-pty.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import { R30xScanner } from '../../../../drivers/r30x/scanner.js';
import { R30xSimulator } from '../../../../drivers/r30x/simulator.js';
import { IMAGE_BYTES } from '../../../../drivers/r30x/protocol.js';
import type { ScannerInfo } from '../../../../drivers/scanner.js';
import type { SerialTransport } from '../../../../drivers/transport/serial-transport.js';
import type { SerialLine } from '../transport/serial-lines.fixture.js';
import { r30xCommandSuite, testImage } from './scanner.contract.js';

interface LineRig {
  line: SerialLine;
  simulator: R30xSimulator;
  scanner: R30xScanner;
  host: SerialTransport;
  close(): Promise<void>;
}

async function lineRig(
  makeLine: () => Promise<SerialLine>,
  options: { baud: number; pacing: boolean; timeoutMs?: number; model?: 'R503' | 'R307'; hostBaud?: boolean },
): Promise<LineRig> {
  const line = await makeLine();
  const device = line.device(options.baud);
  await device.open();
  const simulator = new R30xSimulator(device, {
    baud: options.baud,
    pacing: options.pacing,
    imageSource: testImage,
    model: options.model ?? 'R503',
    ...(options.hostBaud ? { hostBaud: (fresh?: boolean) => line.hostBaud(fresh) } : {}),
  });
  const host = line.host(options.baud, { watchdogMs: 50 });
  // Generous timeouts: these tests are about bytes and events, not speed, and must hold on a busy machine.
  const scanner = new R30xScanner(host, { baud: options.baud, timeoutMs: options.timeoutMs ?? 1000, pollMs: 20, reconnect: false });
  await scanner.open();
  return {
    line,
    simulator,
    scanner,
    host,
    close: async () => {
      await scanner.close();
      await simulator.close();
      await line.close();
    },
  };
}

export function r30xSerialSuite(name: string, makeLine: () => Promise<SerialLine>): void {
  // Correctness at 115200 baud, unpaced so the suite stays fast; pacing is measured by the
  // benchmark and exercised below.
  r30xCommandSuite(`${name} at 115200 baud`, async () => {
    const rig = await lineRig(makeLine, { baud: 115200, pacing: false, timeoutMs: 300 });
    return { scanner: rig.scanner, simulator: rig.simulator, close: rig.close };
  });

  describe(`R30x ${name}, paced at the baud rate`, () => {
    const rigs: LineRig[] = [];
    afterAll(async () => {
      for (const r of rigs) await r.close().catch(() => undefined);
    });

    it('moves a whole image paced at 115200 baud, byte for byte', async () => {
      const rig = await lineRig(makeLine, { baud: 115200, pacing: true });
      rigs.push(rig);
      rig.simulator.present(9);
      await rig.scanner.driver.genImg();
      const t0 = performance.now();
      const img = await rig.scanner.driver.upImage();
      // 36,864 bytes in 128-byte packets (about 39,500 on the wire) at 11,520 bytes a second.
      expect(performance.now() - t0).toBeGreaterThan(3000);
      expect(img.raw.length).toBe(IMAGE_BYTES);
      const want = testImage(9, 1).pixels;
      for (let i = 0; i < 2000; i++) expect(img.pixels[i]).toBe((want[i]! >> 4) * 17);
    });

    it('switches the module and the port to another baud rate with WriteReg; a module at another speed hears nothing', async () => {
      const rig = await lineRig(makeLine, { baud: 57600, pacing: true, hostBaud: true });
      rigs.push(rig);
      await rig.scanner.driver.setBaud(115200);
      expect(rig.simulator.baud).toBe(115200);
      expect(rig.host.baud).toBe(115200);
      expect(rig.line.hostBaud(true)).toBe(115200);
      expect((await rig.scanner.driver.readSystemParameters()).baud).toBe(115200);
      // The port alone back at 57600: the module, still at 115200, hears noise and answers nothing.
      await rig.host.setBaudRate(57600);
      await new Promise((r) => setTimeout(r, 150)); // a new session: the module notices the line anew
      const err = await rig.scanner.driver.readSystemParameters({ timeoutMs: 200, retries: 0 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentError(err, 'DRIVER_TIMEOUT')).toBe(true);
    });

    it('unplugging in the middle of UpImage fails with TRANSPORT_DISCONNECTED, not a hang or a timeout', async () => {
      // A long exchange timeout: only the disconnect can end this exchange early.
      const rig = await lineRig(makeLine, { baud: 115200, pacing: true, timeoutMs: 20_000 });
      rigs.push(rig);
      rig.simulator.present(3);
      await rig.scanner.driver.genImg();
      let received = 0;
      const disconnects: Error[] = [];
      rig.scanner.on('disconnect', (e) => disconnects.push(e));
      rig.host.on('data', (d) => {
        received += d.length;
        if (received > 8000 && received - d.length <= 8000) void rig.line.unplug(); // pull the cable
      });
      const t0 = performance.now();
      const err = await rig.scanner.driver.upImage().then(
        () => null,
        (e: unknown) => e,
      );
      const ms = performance.now() - t0;
      expect(isAgentError(err, 'TRANSPORT_DISCONNECTED'), String(err)).toBe(true);
      expect((err as { hint?: string }).hint).toMatch(/cable/);
      expect(received).toBeGreaterThan(8000);
      expect(received).toBeLessThan(IMAGE_BYTES);
      // Well inside the 20 s exchange timeout: the disconnect ended it.
      expect(ms).toBeLessThan(10_000);
      expect(disconnects).toHaveLength(1);
      const again = await rig.scanner.driver.templateCount().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentError(again, 'TRANSPORT_DISCONNECTED')).toBe(true);
    });

    it('an R307 (no product info, no LED) still opens, reports its library and gives no LED feedback', async () => {
      const rig = await lineRig(makeLine, { baud: 115200, pacing: false, model: 'R307' });
      rigs.push(rig);
      const info = await rig.scanner.info();
      expect(info).toMatchObject({ family: 'r30x', model: 'R30x', capacity: 1000, firmware: null, baud: 115200, transport: 'serial' });
      expect(rig.scanner.capabilities.feedback).toBe(false);
      await rig.scanner.feedback('accepted');
      expect(rig.simulator.led).toBeNull();
    });

    it('reconnects by itself with backoff when the module is plugged back in', async () => {
      const line = await makeLine();
      const plugIn = async () => {
        const device = line.device(115200);
        await device.open();
        const sim = new R30xSimulator(device, { baud: 115200, pacing: false, imageSource: testImage, model: 'R503' });
        sim.enroll(9, 99);
        return sim;
      };
      let sim = await plugIn();
      const scanner = new R30xScanner(line.host(115200, { watchdogMs: 50 }), { baud: 115200, timeoutMs: 1000 });
      try {
        await scanner.open();
        const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
        const back = new Promise<ScannerInfo>((r) => scanner.once('reconnect', r));
        await sim.close();
        await line.unplug();
        expect(isAgentError(await gone, 'TRANSPORT_DISCONNECTED')).toBe(true);
        await new Promise((r) => setTimeout(r, 300)); // a few failed reopen attempts
        await line.replug();
        sim = await plugIn();
        const info = await back;
        expect(info).toMatchObject({ family: 'r30x', templates: 1, capacity: 200, path: line.hostPath });
        sim.present(99);
        expect(await scanner.searchOnModule()).toMatchObject({ slot: 9 });
      } finally {
        await scanner.close();
        await sim.close();
        await line.close();
      }
    });
  });
}
