import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Gt521Driver } from '../../../../drivers/gt521/driver.js';
import { Gt521NackError } from '../../../../drivers/gt521/errors.js';
import { IMAGE_HEIGHT, IMAGE_SIZE, IMAGE_WIDTH, RAW_IMAGE_SIZE, TEMPLATE_SIZE } from '../../../../drivers/gt521/protocol.js';
import { decodeSimTemplate } from '../../../../drivers/gt521/sim-template.js';
import { Gt521Simulator, RECEIVED_KEPT, type Gt521SimulatorOptions } from '../../../../drivers/gt521/simulator.js';
import type { SimImage } from '../../../../drivers/simulator/images.js';
import { createMemoryPair } from '../../../../drivers/transport/memory-transport.js';

/** An injected image source: a gradient keyed by finger and impression. */
const images = (id: number, impression: number): SimImage => {
  const width = 300;
  const height = 240;
  const pixels = new Uint8Array(width * height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * ((id % 7) + 1) + impression) & 0xff;
  return { width, height, pixels };
};

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function setup(sim: Partial<Gt521SimulatorOptions> = {}, link: { timeoutMs?: number; retries?: number } = {}) {
  const pair = createMemoryPair('gt521');
  const simulator = new Gt521Simulator({ images, pace: false, ...sim });
  await simulator.attach(pair.device);
  await pair.host.open();
  const driver = new Gt521Driver(pair.host, { timeoutMs: link.timeoutMs ?? 300, retries: link.retries ?? 2, settleMs: 5 });
  opened.push(async () => {
    driver.detach();
    await pair.host.close();
    await simulator.detach();
  });
  return { pair, simulator, driver };
}

async function nackOf(p: Promise<unknown>): Promise<Gt521NackError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Gt521NackError);
  return err as Gt521NackError;
}

describe('GT-521 driver against the simulator (in-process)', () => {
  it('opens with firmware, ISO area size and serial, and detects the model from the capacity', async () => {
    const { driver } = await setup({ firmwareVersion: 0x12345678, serialNumber: Buffer.alloc(16, 0xab) });
    const info = await driver.open();
    expect(info.firmwareVersion).toBe(0x12345678);
    expect(info.isoAreaMaxSize).toBe(0x1c000);
    expect(info.serialNumber).toEqual(Buffer.alloc(16, 0xab));
    expect(await driver.detectCapacity()).toEqual({ model: 'GT-521F52', capacity: 3000 });
    await driver.openQuiet();
    await driver.close();
  });

  it('tells a GT-521F32 by its 200 slots', async () => {
    const { driver } = await setup({ model: 'GT-521F32' });
    expect(await driver.detectCapacity()).toEqual({ model: 'GT-521F32', capacity: 200 });
    const err = await nackOf(driver.checkEnrolled(200));
    expect(err.code).toBe('DRIVER_GT521_INVALID_POS');
    expect(err.context).toMatchObject({ deviceCode: 0x1003, deviceName: 'NACK_INVALID_POS', command: 'CheckEnrolled' });
  });

  it('switches the LED, counts, checks and deletes slots', async () => {
    const { driver, simulator } = await setup();
    await driver.cmosLed(true);
    expect(simulator.led).toBe(true);
    await driver.cmosLed(false);
    expect(simulator.led).toBe(false);
    expect(await driver.getEnrollCount()).toBe(0);
    simulator.enrollDirect(5, 42);
    simulator.enrollDirect(9, 43);
    expect(await driver.getEnrollCount()).toBe(2);
    expect(await driver.checkEnrolled(5)).toBe(true);
    expect(await driver.checkEnrolled(6)).toBe(false);
    await driver.deleteId(5);
    expect(await driver.checkEnrolled(5)).toBe(false);
    expect((await nackOf(driver.deleteId(5))).code).toBe('DRIVER_GT521_IS_NOT_USED');
    await driver.deleteAll();
    expect(await driver.getEnrollCount()).toBe(0);
    expect((await nackOf(driver.deleteAll())).code).toBe('DRIVER_GT521_DB_IS_EMPTY');
  });

  it('changes the baud rate and refuses one the module does not have', async () => {
    const { driver, simulator } = await setup();
    await driver.changeBaud(115200);
    expect(simulator.baud).toBe(115200);
    expect(driver.link.baud).toBe(115200);
    await expect(driver.changeBaud(12345)).rejects.toMatchObject({ code: 'DRIVER_BAD_PARAM' });
  });

  it('senses the finger, captures, makes a template and downloads both images', async () => {
    const { driver, simulator } = await setup();
    expect(await driver.isPressFinger()).toBe(false);
    expect((await nackOf(driver.captureFinger(true))).code).toBe('DRIVER_GT521_FINGER_IS_NOT_PRESSED');
    simulator.present(42);
    expect(await driver.isPressFinger()).toBe(true);
    await driver.captureFinger(true);
    const tpl = await driver.makeTemplate();
    expect(tpl.length).toBe(TEMPLATE_SIZE);
    expect(decodeSimTemplate(tpl)?.fingerId).toBe(42);
    const img = await driver.getImage();
    expect(img.length).toBe(IMAGE_SIZE);
    expect(IMAGE_WIDTH * IMAGE_HEIGHT).toBe(52116);
    // A picture, not a blank: many gray levels.
    expect(new Set(img).size).toBeGreaterThan(50);
    const raw = await driver.getRawImage();
    expect(raw.length).toBe(RAW_IMAGE_SIZE);
  });

  it('enrols from three presses into a slot, then verifies and identifies', async () => {
    const { driver, simulator } = await setup();
    simulator.present(7);
    await driver.enrollStart(3);
    for (const step of [1, 2, 3] as const) {
      await driver.captureFinger(true);
      if (step === 1) await driver.enroll1();
      else if (step === 2) await driver.enroll2();
      else expect(await driver.enroll3(false)).toBeNull();
    }
    expect(await driver.checkEnrolled(3)).toBe(true);
    await driver.captureFinger(false);
    expect(await driver.verify(3)).toBe(true);
    expect(await driver.identify()).toBe(3);
    simulator.present(8);
    await driver.captureFinger(false);
    expect(await driver.verify(3)).toBe(false);
    expect(await driver.identify()).toBeNull();
    // Same finger again: Enroll3 reports the duplicate slot.
    simulator.present(7);
    await driver.enrollStart(4);
    await driver.captureFinger(true);
    await driver.enroll1();
    await driver.captureFinger(true);
    await driver.enroll2();
    await driver.captureFinger(true);
    const dup = await nackOf(driver.enroll3(false));
    expect(dup.code).toBe('DRIVER_GT521_DUPLICATE');
    expect(dup.context.duplicateOf).toBe(3);
  });

  it('enrolls without saving and gets the template back from Enroll3', async () => {
    const { driver, simulator } = await setup();
    simulator.present(11);
    await driver.enrollStart(null);
    await driver.captureFinger(true);
    await driver.enroll1();
    await driver.captureFinger(true);
    await driver.enroll2();
    await driver.captureFinger(true);
    const tpl = await driver.enroll3(true);
    expect(decodeSimTemplate(tpl!)?.fingerId).toBe(11);
    expect(await driver.getEnrollCount()).toBe(0);
  });

  it('names enrolment errors: order, bad finger, different fingers, used slot', async () => {
    const { driver, simulator } = await setup();
    expect((await nackOf(driver.enroll2())).code).toBe('DRIVER_GT521_TURN_ERR');
    simulator.enrollDirect(1, 1);
    expect((await nackOf(driver.enrollStart(1))).code).toBe('DRIVER_GT521_IS_ALREADY_USED');
    expect((await nackOf(driver.enrollStart(5000))).code).toBe('DRIVER_GT521_INVALID_POS');
    simulator.present(2);
    await driver.enrollStart(2);
    await driver.captureFinger(true);
    await driver.enroll1();
    simulator.present(3);
    await driver.captureFinger(true);
    expect((await nackOf(driver.enroll2())).code).toBe('DRIVER_GT521_ENROLL_FAILED');
    simulator.faults.lowQuality = true;
    await driver.enrollStart(2);
    await driver.captureFinger(true);
    const bad = await nackOf(driver.enroll1());
    expect(bad.code).toBe('DRIVER_GT521_BAD_FINGER');
    expect(bad.retryable).toBe(true);
    expect(bad.hint).toMatch(/finger/i);
  });

  it('reports a full database', async () => {
    const { driver, simulator } = await setup({ model: 'GT-521F32' });
    for (let i = 0; i < 200; i++) simulator.enrollDirect(i, 1000 + i);
    expect((await nackOf(driver.enrollStart(ENROLL_ANY))).code).toBe('DRIVER_GT521_INVALID_POS');
    await driver.deleteId(199);
    simulator.enrollDirect(199, 5);
    const err = await nackOf(driver.enrollStart(0));
    expect(err.code).toBe('DRIVER_GT521_IS_ALREADY_USED');
  });

  it('downloads and uploads templates, and matches uploaded ones on the module', async () => {
    const { driver, simulator } = await setup();
    simulator.enrollDirect(0, 21);
    const t0 = await driver.getTemplate(0);
    expect(decodeSimTemplate(t0)?.fingerId).toBe(21);
    expect((await nackOf(driver.getTemplate(1))).code).toBe('DRIVER_GT521_IS_NOT_USED');
    // Upload to slot 1: the duplicate check sees finger 21 in slot 0.
    const dup = await nackOf(driver.setTemplate(1, t0));
    expect(dup.context.duplicateOf).toBe(0);
    await driver.setTemplate(1, t0, { checkDuplicate: false });
    expect(await driver.getTemplate(1)).toEqual(t0);
    const other = Gt521Simulator.templateFor(99, 2);
    await driver.setTemplate(2, other);
    expect(await driver.verifyTemplate(2, Gt521Simulator.templateFor(99, 5))).toBe(true);
    expect(await driver.verifyTemplate(0, other)).toBe(false);
    expect(await driver.identifyTemplate(Gt521Simulator.templateFor(99, 7))).toBe(2);
    expect(await driver.identifyTemplate(Gt521Simulator.templateFor(12345))).toBeNull();
    await expect(driver.setTemplate(3, new Uint8Array(10))).rejects.toMatchObject({ code: 'DRIVER_BAD_TEMPLATE' });
    // A foreign blob is stored and returned as is, and matches nothing.
    const foreign = Buffer.alloc(TEMPLATE_SIZE, 0x42);
    await driver.setTemplate(4, foreign);
    expect(await driver.getTemplate(4)).toEqual(foreign);
    expect(await driver.identifyTemplate(foreign)).toBeNull();
  });

  it('keeps only the last commands in its log, however long it runs', async () => {
    const { driver, simulator } = await setup();
    for (let i = 0; i < RECEIVED_KEPT + 5; i++) await driver.isPressFinger();
    await driver.getEnrollCount();
    expect(simulator.received).toHaveLength(RECEIVED_KEPT);
    expect(simulator.received.at(-1)).toBe('GetEnrollCount');
  });

  it('answers no match on an empty database instead of failing', async () => {
    const { driver, simulator } = await setup();
    simulator.present(1);
    await driver.captureFinger(false);
    expect(await driver.identify()).toBeNull();
    expect(await driver.identifyTemplate(Gt521Simulator.templateFor(1))).toBeNull();
  });
});

describe('GT-521 driver faults', () => {
  it('retries after a bad checksum and gets the answer', async () => {
    const { driver, simulator } = await setup();
    simulator.enrollDirect(0, 1);
    simulator.faults.badChecksum = 1;
    expect(await driver.getEnrollCount()).toBe(1);
    // The first attempt's ACK and data packet are both damaged; the retry gets both intact.
    simulator.faults.badChecksum = 2;
    expect(decodeSimTemplate(await driver.getTemplate(0))?.fingerId).toBe(1);
    expect(simulator.received.filter((c) => c === 'GetTemplate')).toHaveLength(2);
    expect(driver.link.strayFrames).toBe(0);
  });

  it('never returns wrong data and never gets stuck, whatever frames are damaged', async () => {
    const { driver, simulator } = await setup({}, { timeoutMs: 40, retries: 2 });
    const stored = simulator.enrollDirect(7, 70);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }), async (bad, drop) => {
        simulator.setFault('bad-checksum', bad);
        simulator.setFault('dropped-bytes', drop);
        const r = await driver.getTemplate(7).catch((e: unknown) => e as { code: string });
        if (Buffer.isBuffer(r)) expect(r).toEqual(stored);
        else expect(r.code).toMatch(/^DRIVER_(CHECKSUM|TIMEOUT)$/);
        simulator.setFault('bad-checksum', 0);
        simulator.setFault('dropped-bytes', 0);
        // The link is usable at once afterwards.
        expect(await driver.getTemplate(7)).toEqual(stored);
      }),
      { numRuns: 15 },
    );
  });

  it('gives up with DRIVER_CHECKSUM when every answer is damaged', async () => {
    const { driver, simulator } = await setup({}, { retries: 1 });
    simulator.faults.badChecksum = 10;
    await expect(driver.getEnrollCount()).rejects.toMatchObject({ code: 'DRIVER_CHECKSUM', retryable: true });
  });

  it('recovers when bytes are dropped from the reply and its data packet: the retry succeeds', async () => {
    const { driver, simulator } = await setup({}, { timeoutMs: 150 });
    simulator.present(3);
    await driver.captureFinger(true);
    simulator.faults.droppedBytes = 2; // the ACK and the data packet each lose 3 bytes
    const tpl = await driver.makeTemplate();
    expect(decodeSimTemplate(tpl)?.fingerId).toBe(3);
    expect(simulator.received.filter((c) => c === 'MakeTemplate')).toHaveLength(2);
  });

  it('fails with DRIVER_TIMEOUT when the module stalls, and does not retry a non-idempotent command', async () => {
    const { driver, simulator } = await setup({}, { timeoutMs: 100 });
    simulator.faults.stall = true;
    const t0 = Date.now();
    const err = await driver.deleteAll().then(
      () => null,
      (e: unknown) => e as { code: string; hint: string },
    );
    expect(err?.code).toBe('DRIVER_TIMEOUT');
    expect(err?.hint).toMatch(/baud/);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(simulator.received).toEqual(['DeleteAll']);
  });

  it('fails at once with TRANSPORT_DISCONNECTED when unplugged in the middle of GetImage', async () => {
    const { driver, simulator } = await setup({ pace: true, baud: 115200 }, { timeoutMs: 2000 });
    simulator.present(4);
    await driver.captureFinger(true);
    simulator.faults.unplugAfterBytes = 3000;
    const t0 = Date.now();
    await expect(driver.getImage()).rejects.toMatchObject({ code: 'TRANSPORT_DISCONNECTED' });
    // 3000 bytes at 115200 baud take 260 ms; the error comes right after, far inside the timeout.
    expect(Date.now() - t0).toBeLessThan(1500);
    await expect(driver.getEnrollCount()).rejects.toMatchObject({ code: 'TRANSPORT_DISCONNECTED' });
  });

  it('hears nothing from a host at another baud rate, and rereads the host speed after ChangeBaud', async () => {
    let hostBaud = 9600;
    const reads: boolean[] = [];
    const { driver } = await setup(
      {
        baud: 57600,
        hostBaud: (fresh) => {
          reads.push(Boolean(fresh));
          return hostBaud;
        },
      },
      { timeoutMs: 60, retries: 0 },
    );
    await expect(driver.getEnrollCount()).rejects.toMatchObject({ code: 'DRIVER_TIMEOUT' });
    hostBaud = 57600;
    expect(await driver.getEnrollCount()).toBe(0);
    await driver.changeBaud(115200);
    hostBaud = 115200;
    expect(await driver.getEnrollCount()).toBe(0);
    expect(reads[0]).toBe(true);
    expect(reads.at(-1)).toBe(true);
  });

  it('ignores a command with a bad checksum and answers damaged host data with NACK_COMM_ERR', async () => {
    const { pair, simulator } = await setup();
    const { encodePacket, encodeData, decodePacket } = await import('../../../../drivers/gt521/codec.js');
    const replies: Buffer[] = [];
    pair.host.on('data', (d) => replies.push(d));
    const bad = encodePacket({ code: 0x20 });
    bad[10]! ^= 1;
    await pair.host.write(bad);
    await new Promise((r) => setTimeout(r, 20));
    expect(replies).toEqual([]);
    expect(simulator.received).toEqual([]);
    await pair.host.write(encodePacket({ code: 0x71, parameter: 5 }));
    await new Promise((r) => setTimeout(r, 20));
    expect(decodePacket(Buffer.concat(replies.splice(0)))).toMatchObject({ code: 0x30 });
    const data = encodeData(Gt521Simulator.templateFor(1));
    data[100]! ^= 0xff;
    await pair.host.write(data);
    await new Promise((r) => setTimeout(r, 20));
    expect(decodePacket(Buffer.concat(replies.splice(0)))).toEqual({ deviceId: 1, code: 0x31, parameter: 0x1006 });
    expect(simulator.slots.has(5)).toBe(false);
  });

  it('reports no finger whatever is placed when the sensor is blind', async () => {
    const { driver, simulator } = await setup();
    simulator.present(5);
    simulator.faults.noFinger = true;
    expect(await driver.isPressFinger()).toBe(false);
    expect((await nackOf(driver.captureFinger(false))).code).toBe('DRIVER_GT521_FINGER_IS_NOT_PRESSED');
  });

  it('gives a low-quality image that matches nothing when the fault is on', async () => {
    const { driver, simulator } = await setup();
    simulator.enrollDirect(0, 5);
    simulator.present(5);
    await driver.captureFinger(true);
    const good = await driver.getImage();
    simulator.faults.lowQuality = true;
    await driver.captureFinger(true);
    const poor = await driver.getImage();
    expect(poor).not.toEqual(good);
    expect(await driver.identify()).toBeNull();
  });
});

const ENROLL_ANY = 200;

describe('GT-521 link floors', () => {
  it('counts the bytes of a bulk exchange both ways', async () => {
    const { gt521WireBytes, gt521FloorMs } = await import('../../../../drivers/gt521/driver.js');
    // Command 12 + ACK 12 + data 6 + 52116.
    expect(gt521WireBytes('GetImage')).toBe(12 + 12 + 6 + 52116);
    // Command 12 + ACK 12 + host data 504 + final ACK 12.
    expect(gt521WireBytes('SetTemplate')).toBe(12 + 12 + 504 + 12);
    expect(gt521FloorMs('GetTemplate', 115200)).toBeCloseTo(((12 + 12 + 504) * 10 * 1000) / 115200, 6);
  });
});
