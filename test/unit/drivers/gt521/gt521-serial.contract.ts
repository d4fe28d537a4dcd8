/**
 * The GT-521 driver against its simulator over a serial line (the real SerialTransport on the host
 * end): every command, the discovery probe, paced transfers, an unplug in the middle of GetImage,
 * frames through the line's chunking, and reconnecting. Written once, run over serialport's mock
 * binding (gt521-serial.test.ts) and over a real socat pty where socat exists
 * (test/integration/drivers-gt521-pty.test.ts).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeData, encodePacket, type Gt521Packet } from '../../../../drivers/gt521/codec.js';
import { Gt521Parser } from '../../../../drivers/gt521/parser.js';
import type { ScannerInfo } from '../../../../drivers/scanner.js';
import { Gt521Driver } from '../../../../drivers/gt521/driver.js';
import { probeGt521Transport } from '../../../../drivers/gt521/probe.js';
import { Gt521Scanner } from '../../../../drivers/gt521/scanner.js';
import { decodeSimTemplate } from '../../../../drivers/gt521/sim-template.js';
import { Gt521Simulator, type Gt521SimulatorOptions } from '../../../../drivers/gt521/simulator.js';
import { IMAGE_SIZE, RAW_IMAGE_SIZE } from '../../../../drivers/gt521/protocol.js';
import type { SimImage } from '../../../../drivers/simulator/images.js';
import type { SerialLine } from '../transport/serial-lines.fixture.js';

const images = (id: number, impression: number): SimImage => ({
  width: 160,
  height: 120,
  pixels: Uint8Array.from({ length: 160 * 120 }, (_, i) => ((i % 160) * 2 + id + impression) & 0xff),
});

export function gt521SerialSuite(name: string, makeLine: () => Promise<SerialLine>): void {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function setup(sim: Partial<Gt521SimulatorOptions> = {}, baud = 115200) {
    const line = await makeLine();
    cleanup.push(() => line.close());
    const simulator = new Gt521Simulator({ images, baud, pace: false, ...sim, unplug: () => line.unplug() });
    await simulator.attach(line.device(baud));
    cleanup.push(() => simulator.close());
    const host = line.host(baud, { watchdogMs: 50 });
    await host.open();
    cleanup.push(() => host.close());
    return { line, simulator, host };
  }

  describe(`GT-521 ${name}`, () => {
    it('runs every command against the simulator', async () => {
      const { simulator, host } = await setup();
      const d = new Gt521Driver(host, { baud: 115200, timeoutMs: 1000 });
      cleanup.push(async () => d.detach());
      const info = await d.open();
      expect(info.serialNumber.length).toBe(16);
      expect(await d.detectCapacity()).toEqual({ model: 'GT-521F52', capacity: 3000 });
      await d.cmosLed(true);
      expect(simulator.led).toBe(true);
      expect(await d.isPressFinger()).toBe(false);
      simulator.present(77);
      expect(await d.isPressFinger()).toBe(true);
      // Enrol into slot 10.
      await d.enrollStart(10);
      await d.captureFinger(true);
      await d.enroll1();
      await d.captureFinger(true);
      await d.enroll2();
      await d.captureFinger(true);
      expect(await d.enroll3(false)).toBeNull();
      expect(await d.getEnrollCount()).toBe(1);
      expect(await d.checkEnrolled(10)).toBe(true);
      // Search, 1:1 and 1:N.
      await d.captureFinger(false);
      expect(await d.verify(10)).toBe(true);
      expect(await d.identify()).toBe(10);
      // Templates both ways.
      const made = await d.makeTemplate();
      expect(decodeSimTemplate(made)?.fingerId).toBe(77);
      const stored = await d.getTemplate(10);
      expect(decodeSimTemplate(stored)?.fingerId).toBe(77);
      await d.setTemplate(11, Gt521Simulator.templateFor(78));
      expect(await d.verifyTemplate(11, Gt521Simulator.templateFor(78, 4))).toBe(true);
      expect(await d.identifyTemplate(made)).toBe(10);
      // Images.
      expect((await d.getImage()).length).toBe(IMAGE_SIZE);
      expect((await d.getRawImage()).length).toBe(RAW_IMAGE_SIZE);
      // Enrol without saving.
      simulator.present(79);
      await d.enrollStart(null);
      for (const step of [1, 2, 3]) {
        await d.captureFinger(true);
        if (step === 1) await d.enroll1();
        if (step === 2) await d.enroll2();
        if (step === 3) expect(decodeSimTemplate((await d.enroll3(true))!)?.fingerId).toBe(79);
      }
      await d.deleteId(10);
      expect(await d.checkEnrolled(10)).toBe(false);
      await d.deleteAll();
      expect(await d.getEnrollCount()).toBe(0);
      // Named NACKs survive the trip.
      await expect(d.getTemplate(10)).rejects.toMatchObject({ code: 'DRIVER_GT521_IS_NOT_USED', context: { deviceCode: 0x1004 } });
      await d.changeBaud(57600);
      expect(simulator.baud).toBe(57600);
      expect(await d.getEnrollCount()).toBe(0);
      await d.close();
      expect(simulator.received).toEqual(
        expect.arrayContaining([
          'Open',
          'Close',
          'ChangeBaud',
          'CmosLed',
          'GetEnrollCount',
          'CheckEnrolled',
          'EnrollStart',
          'Enroll1',
          'Enroll2',
          'Enroll3',
          'IsPressFinger',
          'DeleteID',
          'DeleteAll',
          'Verify',
          'Identify',
          'VerifyTemplate',
          'IdentifyTemplate',
          'CaptureFinger',
          'MakeTemplate',
          'GetImage',
          'GetRawImage',
          'GetTemplate',
          'SetTemplate',
        ]),
      );
    });

    it('recovers from garbage and bad checksums on the line', async () => {
      const { simulator, host } = await setup();
      const d = new Gt521Driver(host, { baud: 115200, timeoutMs: 300, settleMs: 10 });
      cleanup.push(async () => d.detach());
      simulator.enrollDirect(2, 5);
      simulator.faults.badChecksum = 1;
      expect(await d.getEnrollCount()).toBe(1);
      simulator.setFault('dropped-bytes', 1);
      expect(decodeSimTemplate(await d.getTemplate(2))?.fingerId).toBe(5);
    });

    it('transfers a template at the pace of 115200 baud', async () => {
      const { simulator, host } = await setup({ pace: true });
      const d = new Gt521Driver(host, { baud: 115200 });
      cleanup.push(async () => d.detach());
      simulator.enrollDirect(0, 3);
      const t0 = performance.now();
      const tpl = await d.getTemplate(0);
      const ms = performance.now() - t0;
      expect(decodeSimTemplate(tpl)?.fingerId).toBe(3);
      // 12 + 12 + 504 bytes at 10 bits each: 45.8 ms of wire time at least.
      expect(ms).toBeGreaterThanOrEqual(40);
    });

    it('gives TRANSPORT_DISCONNECTED within the timeout when unplugged in the middle of GetImage', async () => {
      const { simulator, host } = await setup({ pace: true });
      const d = new Gt521Driver(host, { baud: 115200, timeoutMs: 2000 });
      cleanup.push(async () => d.detach());
      simulator.present(1);
      await d.captureFinger(true);
      simulator.faults.unplugAfterBytes = 6000;
      const t0 = performance.now();
      const err = await d.getImage().then(
        () => null,
        (e: unknown) => e as { code: string; hint?: string },
      );
      const ms = performance.now() - t0;
      expect(err?.code).toBe('TRANSPORT_DISCONNECTED');
      expect(err?.hint).toMatch(/cable/);
      // The GetImage timeout is 2000 ms + 1.5 × 4.5 s of wire time; the error comes long before.
      expect(ms).toBeLessThan(3000);
    });

    it('is found by the discovery probe, and a silent port is not', async () => {
      const { simulator, line, host } = await setup({ model: 'GT-521F32', firmwareVersion: 0x01020304 }, 9600);
      simulator.enrollDirect(0, 1);
      simulator.enrollDirect(1, 2);
      await host.close();
      const probe = (timeoutMs: number) => line.withHostPort(9600, (t) => probeGt521Transport(t, 9600, timeoutMs));
      const found = await probe(1000);
      expect(found).toEqual({
        model: 'GT-521F32',
        firmware: '01020304',
        capacity: 200,
        templates: 2,
        serial: '0011223344556677-8899AABBCCDDEEFF',
      });
      simulator.setFault('stall', true);
      const t0 = Date.now();
      expect(await probe(300)).toBeNull();
      expect(Date.now() - t0).toBeLessThan(2000);
    });

    it('works as a Scanner over the line', async () => {
      const { simulator, host } = await setup();
      const scanner = new Gt521Scanner({ transport: host, baud: 115200, pollMs: 5, reconnect: false });
      cleanup.push(() => scanner.close());
      const info = await scanner.open();
      expect(info).toMatchObject({ family: 'gt521', transport: 'serial', baud: 115200, capacity: 3000, templates: 0 });
      simulator.enrollDirect(4, 12);
      simulator.present(12);
      expect(await scanner.waitForPresence({ timeoutMs: 500 })).toBe(true);
      expect(await scanner.searchOnModule()).toEqual({ slot: 4, score: 100 });
      const img = await scanner.captureImage();
      expect(img.pixels.length).toBe(IMAGE_SIZE);
    });
  });

  describe(`GT-521 frames ${name}`, () => {
    it('parses back random frames with garbage between them, whatever chunks the line makes', async () => {
      const line = await makeLine();
      cleanup.push(() => line.close());
      const writer = line.device(115200);
      await writer.open();
      cleanup.push(() => writer.close());
      const reader = line.host(115200);
      await reader.open();
      cleanup.push(() => reader.close());
      const packetArb = fc.record({
        deviceId: fc.constant(1),
        parameter: fc.integer({ min: 0, max: 0xffffffff }),
        code: fc.integer({ min: 0, max: 0xffff }),
      });
      const garbageArb = fc.uint8Array({ maxLength: 30 }).map((g) => Buffer.from(g.filter((b) => b !== 0x55 && b !== 0x5a)));
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(garbageArb, fc.oneof(packetArb, fc.uint8Array({ minLength: 40, maxLength: 40 }))), {
            minLength: 1,
            maxLength: 8,
          }),
          async (items) => {
            const got: unknown[] = [];
            const parser: Gt521Parser = new Gt521Parser({
              packet: (p: Gt521Packet) => got.push(p),
              data: (d) => {
                got.push([...d.data]);
                parser.expectedDataLength = 40;
              },
              error: (e) => got.push(e.code),
            });
            parser.expectedDataLength = 40;
            const expected = items.map(([, f]) => (f instanceof Uint8Array ? [...f] : f));
            const bytes = Buffer.concat(items.flatMap(([g, f]) => [g, f instanceof Uint8Array ? encodeData(f) : encodePacket(f)]));
            const done = new Promise<void>((resolve) => {
              const onData = (chunk: Buffer) => {
                parser.push(chunk);
                if (got.length >= expected.length) {
                  reader.off('data', onData);
                  resolve();
                }
              };
              reader.on('data', onData);
            });
            await writer.write(bytes);
            await done;
            expect(got).toEqual(expected);
          },
        ),
        { numRuns: 25 },
      );
    });
  });

  describe(`GT-521 scanner reconnect ${name}`, () => {
    it('emits disconnect when the cable is pulled, reopens the same path with backoff and emits reconnect', async () => {
      const line = await makeLine();
      const serve = async () => {
        const sim = new Gt521Simulator({ images, baud: 115200, pace: false, serialNumber: Buffer.alloc(16, 7) });
        await sim.attach(line.device(115200));
        return sim;
      };
      let sim = await serve();
      const scanner = new Gt521Scanner({
        transport: line.host(115200, { watchdogMs: 50 }),
        baud: 115200,
        reconnect: { baseMs: 20, capMs: 100 },
      });
      cleanup.push(async () => {
        await scanner.close();
        await sim.close().catch(() => undefined);
        await line.close();
      });
      expect((await scanner.open()).serial).toBe('0707070707070707-0707070707070707');
      const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
      const back = new Promise<ScannerInfo>((r) => scanner.once('reconnect', r));
      await line.unplug();
      expect(((await gone) as { code?: string }).code).toBe('TRANSPORT_DISCONNECTED');
      await sim.close().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      await line.replug();
      sim = await serve();
      sim.enrollDirect(1, 9);
      const info = await back;
      expect(info).toMatchObject({ family: 'gt521', path: line.hostPath, templates: 1 });
      sim.present(9);
      expect(await scanner.searchOnModule()).toEqual({ slot: 1, score: 100 });
    });
  });
}
