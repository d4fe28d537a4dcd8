/**
 * Every R30x command against its simulator, written once and run in-process (memory pair) and over
 * a real socat pty (test/integration/drivers-r30x-pty.test.ts).
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import type { R30xSimulator } from '../../../../drivers/r30x/simulator.js';
import type { R30xScanner } from '../../../../drivers/r30x/scanner.js';
import { IMAGE_BYTES } from '../../../../drivers/r30x/protocol.js';
import type { SimImage } from '../../../../drivers/simulator/images.js';

export interface R30xRig {
  scanner: R30xScanner;
  simulator: R30xSimulator;
  close(): Promise<void>;
}

/** Test image: a gradient whose first pixel encodes the finger id, so the picture is checkable. */
export function testImage(id: number, impression: number): SimImage {
  const width = 256;
  const height = 288;
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i + id * 16 + impression) & 0xff;
  pixels[0] = (id & 0x0f) << 4;
  return { width, height, pixels };
}

async function rejectCode(p: Promise<unknown>): Promise<string | undefined> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  return isAgentError(e) ? e.code : e === undefined ? undefined : String(e);
}

export function r30xCommandSuite(name: string, makeRig: () => Promise<R30xRig>): void {
  describe(`R30x commands against the simulator: ${name}`, () => {
    let rig: R30xRig;
    beforeAll(async () => {
      rig = await makeRig();
    });
    afterAll(async () => {
      await rig?.close();
    });

    it('VfyPwd and ReadSysPara report the library size, packet size and baud', async () => {
      const d = rig.scanner.driver;
      await d.verifyPassword(0);
      const p = await d.readSystemParameters();
      expect(p.capacity).toBe(rig.simulator.capacity);
      expect(p.systemId).toBe(0x0009);
      expect(p.packetSize).toBe(rig.simulator.packetSize);
      expect(p.baud).toBe(rig.simulator.baud);
      expect(p.securityLevel).toBe(3);
      expect(await rejectCode(d.verifyPassword(1234))).toBe('DRIVER_R30X_WRONG_PASSWORD');
    });

    it('ReadProdInfo names the R503, and info() carries family, capacity and template count', async () => {
      const prod = await rig.scanner.driver.readProductInfo();
      expect(prod.model).toBe('R503');
      expect(prod.capacity).toBe(rig.simulator.capacity);
      const info = await rig.scanner.info();
      expect(info).toMatchObject({
        family: 'r30x',
        modality: 'finger',
        model: 'R503',
        capacity: rig.simulator.capacity,
        templates: rig.simulator.library.size,
      });
    });

    it('WriteReg changes security level and packet size, and refuses bad values with named errors', async () => {
      const d = rig.scanner.driver;
      await d.setSecurityLevel(4);
      expect(rig.simulator.securityLevel).toBe(4);
      await d.setSecurityLevel(3);
      await d.setPacketSize(64);
      expect(rig.simulator.packetSize).toBe(64);
      expect((await d.readSystemParameters()).packetSize).toBe(64);
      // Transfers both ways in 64-byte packets.
      rig.simulator.enroll(20, 4);
      await d.loadChar(1, 20);
      const t = await d.upChar(1);
      expect(t.equals(rig.simulator.library.get(20)!)).toBe(true);
      await d.downChar(2, t);
      await d.store(2, 21);
      expect(rig.simulator.library.get(21)!.equals(t)).toBe(true);
      await d.deleteChar(20, 2);
      await d.setPacketSize(128);
      expect(await rejectCode(d.writeRegister(5, 9))).toBe('DRIVER_R30X_BAD_REGISTER_VALUE');
      expect(await rejectCode(d.writeRegister(9, 1))).toBe('DRIVER_R30X_INVALID_REGISTER');
    });

    it('GenImg says NO_FINGER with nothing on the sensor, and takes an image with a finger', async () => {
      const d = rig.scanner.driver;
      rig.simulator.lift();
      expect(await rejectCode(d.genImg())).toBe('DRIVER_R30X_NO_FINGER');
      expect(await d.fingerPresent()).toBe(false);
      rig.simulator.present(7);
      await d.genImg();
      expect(await d.fingerPresent()).toBe(true);
    });

    it('UpImage sends 256×288 at 4 bits a pixel, widened to 8 bits', async () => {
      rig.simulator.present(5);
      const img = await rig.scanner.captureImage();
      expect([img.width, img.height, img.sourceBitsPerPixel]).toEqual([256, 288, 4]);
      expect(img.pixels.length).toBe(256 * 288);
      expect(img.pixels[0]).toBe(5 * 17);
      for (const v of img.pixels.subarray(0, 64)) expect(v % 17).toBe(0);
      const raw = await rig.scanner.driver.upImage();
      expect(raw.raw.length).toBe(IMAGE_BYTES);
    });

    it('Img2Tz, RegModel, Store, TemplateNum, ReadIndexTable, Search and HiSpeedSearch over the whole library', async () => {
      const d = rig.scanner.driver;
      await d.empty();
      const last = rig.simulator.capacity - 1;
      rig.simulator.present(101);
      await d.genImg();
      await d.img2Tz(1);
      await d.genImg();
      await d.img2Tz(2);
      await d.regModel();
      await d.store(1, last); // the last slot: beyond the 163 some libraries search
      rig.simulator.enroll(3, 202);
      expect(await d.templateCount()).toBe(2);
      expect(await rig.scanner.usedSlots()).toEqual([3, last]);
      expect(await d.readIndexTable(0)).toEqual([3, last].filter((s) => s < 256));
      rig.simulator.present(101);
      const hit = await rig.scanner.searchOnModule();
      expect(hit?.slot).toBe(last);
      expect(hit!.score).toBeGreaterThanOrEqual(50);
      await d.genImg();
      await d.img2Tz(1);
      expect((await d.search(1, 0, rig.simulator.capacity))?.slot).toBe(last);
      expect(await d.search(1, 0, 100)).toBeNull();
      expect(await rejectCode(d.search(1, rig.simulator.capacity, 10))).toBe('DRIVER_R30X_BAD_LOCATION');
      rig.simulator.present(999);
      expect(await rig.scanner.searchOnModule()).toBeNull();
    });

    it('Match scores the same finger and refuses another', async () => {
      const d = rig.scanner.driver;
      rig.simulator.present(31);
      await d.genImg();
      await d.img2Tz(1);
      await d.genImg();
      await d.img2Tz(2);
      expect(await d.match()).toBeGreaterThanOrEqual(50);
      rig.simulator.present(32);
      await d.genImg();
      await d.img2Tz(2);
      expect(await d.match()).toBeNull();
      expect(await rejectCode(d.regModel())).toBe('DRIVER_R30X_COMBINE_FAILED');
    });

    it('UpChar, DownChar and LoadChar move templates byte for byte; Delete and Empty clear slots', async () => {
      const d = rig.scanner.driver;
      await d.empty();
      rig.simulator.enroll(10, 77);
      const t = await rig.scanner.readFromModule(10);
      expect(t.format).toBe('r30x-char');
      expect(Buffer.from(t.data).equals(rig.simulator.library.get(10)!)).toBe(true);
      await rig.scanner.storeOnModule(11, t);
      expect(rig.simulator.library.get(11)!.equals(Buffer.from(t.data))).toBe(true);
      // Any bytes survive the round trip, not just the simulator's own layout.
      const foreign = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) & 0xff));
      await d.downChar(2, foreign);
      await d.store(2, 12);
      expect(rig.simulator.library.get(12)!.equals(foreign)).toBe(true);
      await d.loadChar(1, 12);
      expect((await d.upChar(1)).equals(foreign)).toBe(true);
      expect(await rejectCode(d.loadChar(1, 50))).toBe('DRIVER_R30X_TEMPLATE_INVALID');
      expect(await rejectCode(d.store(1, rig.simulator.capacity))).toBe('DRIVER_R30X_BAD_LOCATION');
      await rig.scanner.deleteOnModule(11);
      expect(await rig.scanner.usedSlots()).toEqual([10, 12]);
      await rig.scanner.clearModule();
      expect(await d.templateCount()).toBe(0);
    });

    it('enrollOnModule takes two presses of the same finger and returns a template that searches back', async () => {
      rig.simulator.lift();
      const steps: number[] = [];
      const enrolling = rig.scanner.enrollOnModule({
        onStep: (s) => {
          steps.push(s);
          rig.simulator.lift();
          // Pressed again only between the two presses: a re-press after the last one would
          // land 30 ms later, possibly in a later test that needs the sensor empty.
          if (s < 2) setTimeout(() => rig.simulator.present(555), 30);
        },
      });
      setTimeout(() => rig.simulator.present(555), 30);
      const t = await enrolling;
      expect(steps).toEqual([1, 2]);
      await rig.scanner.storeOnModule(0, t);
      rig.simulator.present(555);
      expect((await rig.scanner.searchOnModule())?.slot).toBe(0);
    });

    it('drives the R503 LED for feedback', async () => {
      expect(rig.scanner.capabilities.feedback).toBe(true);
      await rig.scanner.feedback('accepted');
      expect(rig.simulator.led).toMatchObject({ control: 2, color: 4 });
      await rig.scanner.feedback('error');
      expect(rig.simulator.led).toMatchObject({ control: 3, color: 1 });
    });

    it('maps no finger and a poor image to family-neutral errors', async () => {
      rig.simulator.lift();
      expect(await rejectCode(rig.scanner.captureImage())).toBe('DRIVER_NO_FINGER');
      rig.simulator.present(1);
      rig.simulator.setFault('low-quality', true);
      expect(await rejectCode(rig.scanner.searchOnModule())).toBe('DRIVER_LOW_QUALITY');
      rig.simulator.setFault('low-quality', false);
      rig.simulator.setFault('no-finger', true);
      expect(await rejectCode(rig.scanner.captureImage())).toBe('DRIVER_NO_FINGER');
      expect(await rig.scanner.waitForPresence({ timeoutMs: 150 })).toBe(false);
      rig.simulator.setFault('no-finger', false);
      expect(await rig.scanner.waitForPresence({ timeoutMs: 1000 })).toBe(true);
    });

    it('retries through a bad checksum and through dropped bytes', async () => {
      const d = rig.scanner.driver;
      rig.simulator.setFault('bad-checksum', 1);
      expect((await d.readSystemParameters()).capacity).toBe(rig.simulator.capacity);
      rig.simulator.setFault('dropped-bytes', 1);
      expect(await d.templateCount()).toBeGreaterThanOrEqual(0);
      rig.simulator.present(5);
      await d.genImg();
      rig.simulator.setFault('bad-checksum', 3); // ACK fine? no: the first three packets are bad
      const img = await d.upImage();
      expect(img.raw.length).toBe(IMAGE_BYTES);
    });

    it('fails with DRIVER_CHECKSUM when every answer is corrupt, and DRIVER_TIMEOUT on a stall', async () => {
      const d = rig.scanner.driver;
      rig.simulator.setFault('bad-checksum', true);
      expect(await rejectCode(d.templateCount())).toBe('DRIVER_CHECKSUM');
      rig.simulator.setFault('bad-checksum', false);
      rig.simulator.setFault('stall', true);
      const t0 = performance.now();
      expect(await rejectCode(d.templateCount())).toBe('DRIVER_TIMEOUT');
      expect(performance.now() - t0).toBeLessThan((d.timeoutMs + 500) * (d.retries + 1) + 3000);
      rig.simulator.setFault('stall', false);
      expect(await d.templateCount()).toBeGreaterThanOrEqual(0);
    });
  });
}
