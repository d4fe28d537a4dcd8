/**
 * The serial badge reader against its simulator over a serial line (the real SerialTransport and
 * `@serialport/parser-readline` on the host end): a read per card in every format, a card held
 * in the field read once, and each fault switch (garbage, bad checksum, dropped bytes, stall,
 * unplug and replug). Written once, run over serialport's mock binding (serial-reader.test.ts) and
 * over a real socat pty where socat exists (test/integration/drivers-badge-pty.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BadgeSerialReader } from '../../../../drivers/badge/serial-reader.js';
import { BadgeSerialSimulator, type BadgeSerialSimulatorOptions } from '../../../../drivers/badge/serial-simulator.js';
import type { BadgeRead } from '../../../../drivers/scanner.js';
import type { SerialLine } from '../transport/serial-lines.fixture.js';

const BAUD = 9600;

export function badgeSerialSuite(name: string, makeLine: () => Promise<SerialLine>): void {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function setup(sim: BadgeSerialSimulatorOptions = {}, reader: { holdOffMs?: number; reconnect?: boolean } = {}) {
    const line = await makeLine();
    cleanup.push(() => line.close());
    const simulator = new BadgeSerialSimulator({ baud: BAUD, pacing: true, ...sim, unplug: () => line.unplug() });
    await simulator.attach(line.device(BAUD));
    cleanup.push(() => simulator.close());
    const scanner = new BadgeSerialReader(line.host(BAUD, { watchdogMs: 50 }), {
      baud: BAUD,
      ...(sim.format ? { format: sim.format } : {}),
      holdOffMs: reader.holdOffMs ?? 400,
      reconnect: reader.reconnect ?? { baseMs: 20, capMs: 100 },
    });
    cleanup.push(() => scanner.close());
    await scanner.open();
    return { line, simulator, scanner };
  }

  /** The next read (or failed read) within `ms`. */
  async function nextRead(scanner: BadgeSerialReader, ms = 3000): Promise<BadgeRead> {
    expect(await scanner.waitForPresence({ timeoutMs: ms })).toBe(true);
    return scanner.readCredential();
  }

  describe(`serial badge reader ${name}`, () => {
    it('reads a card in each line format as one credential, the same EM4100 card alike in decimal, hex and Wiegand 34', async () => {
      const cases = [
        { format: 'em4100-dec', card: 8844356, credential: '32:8844356' },
        { format: 'em4100-hex', card: 8844356, credential: '32:8844356' },
        { format: 'wiegand34', card: 8844356, credential: '32:8844356' },
        { format: 'wiegand26', card: 0x7b1234, credential: `24:${0x7b1234}` },
      ] as const;
      for (const c of cases) {
        const { simulator, scanner } = await setup({ format: c.format });
        expect(await scanner.info()).toMatchObject({
          family: 'badge-serial',
          modality: 'badge',
          model: `${c.format} reader`,
          baud: BAUD,
          image: null,
          resolution: { kind: 'none' },
        });
        expect(scanner.capabilities).toMatchObject({ credential: true, image: false, feedback: false });
        simulator.present(c.card);
        expect(await nextRead(scanner)).toEqual({ credential: c.credential, format: c.format });
        simulator.lift();
        for (const close of cleanup.splice(0).reverse()) await close();
      }
    });

    it('reads a card held in the field once, though a hex reader repeats its frame every 50 ms; again after the hold-off', async () => {
      const { simulator, scanner } = await setup({ format: 'em4100-hex' }, { holdOffMs: 300 });
      simulator.present(4242);
      expect((await nextRead(scanner)).credential).toBe('32:4242');
      await new Promise((r) => setTimeout(r, 400));
      expect(simulator.framesSent).toBeGreaterThanOrEqual(4);
      expect(await scanner.waitForPresence({ timeoutMs: 10 })).toBe(false);
      expect(scanner.stats.reads).toBe(1);
      expect(scanner.stats.repeats).toBeGreaterThanOrEqual(3);
      simulator.lift();
      await new Promise((r) => setTimeout(r, 400));
      simulator.present(4242);
      expect((await nextRead(scanner)).credential).toBe('32:4242');
    });

    it('drops line noise (garbage) and still reads the card behind it, in a line format and in STX/ETX frames', async () => {
      for (const format of ['em4100-dec', 'em4100-hex'] as const) {
        const { simulator, scanner } = await setup({ format });
        simulator.setFault('garbage', 1);
        simulator.present(77);
        expect((await nextRead(scanner)).credential).toBe('32:77');
        simulator.lift();
        if (format === 'em4100-dec') expect(scanner.stats.noise).toBe(1);
        expect(scanner.stats.misreads).toBe(0);
        for (const close of cleanup.splice(0).reverse()) await close();
      }
    });

    it('asks again after a bad checksum or parity (DRIVER_CHECKSUM) and a lost byte (DRIVER_PROTOCOL), then reads the next frame', async () => {
      const { simulator, scanner } = await setup({ format: 'wiegand26' }, { holdOffMs: 0 });
      simulator.setFault('bad-checksum', 1);
      simulator.present(1000);
      await expect(nextRead(scanner)).rejects.toMatchObject({ code: 'DRIVER_CHECKSUM', hint: expect.stringContaining('present it again') });
      simulator.setFault('dropped-bytes', 1);
      simulator.present(1000);
      await expect(nextRead(scanner)).rejects.toMatchObject({ code: 'DRIVER_PROTOCOL' });
      simulator.present(1000);
      expect((await nextRead(scanner)).credential).toBe('24:1000');
      expect(scanner.stats).toMatchObject({ reads: 1, misreads: 2 });
    });

    it('has no bad-checksum fault for a format without a checksum', async () => {
      const simulator = new BadgeSerialSimulator({ format: 'em4100-dec' });
      expect(() => simulator.setFault('bad-checksum', true)).toThrow(
        expect.objectContaining({ code: 'DRIVER_SIM_UNKNOWN_FAULT', hint: expect.stringContaining('garbage') }),
      );
      expect(() => simulator.setFault('no-finger', true)).toThrow(expect.objectContaining({ code: 'DRIVER_SIM_UNKNOWN_FAULT' }));
      expect(() => simulator.present(2 ** 32)).toThrow(expect.objectContaining({ code: 'DRIVER_BAD_ARGUMENT' }));
    });

    it('reads nothing while the reader stalls, and the card once it goes on', async () => {
      const { simulator, scanner } = await setup();
      simulator.setFault('stall', true);
      simulator.present(5);
      expect(await scanner.waitForPresence({ timeoutMs: 300 })).toBe(false);
      simulator.setFault('stall', false);
      expect((await nextRead(scanner)).credential).toBe('32:5');
    });

    it('says the reader went away when unplugged, reopens it once plugged back and reads again', async () => {
      const { line, simulator, scanner } = await setup();
      const gone = new Promise<Error>((r) => scanner.once('disconnect', r));
      const back = new Promise((r) => scanner.once('reconnect', r));
      simulator.setFault('unplug', true);
      expect((await gone).message).toMatch(/went away|disconnect|unplug|EIO|closed/i);
      await line.replug();
      await simulator.attach(line.device(BAUD));
      await back;
      simulator.present(8);
      expect((await nextRead(scanner)).credential).toBe('32:8');
    });

    it('drops a line that never ends (longer than any frame) and reads the card after it', async () => {
      const line = await makeLine();
      cleanup.push(() => line.close());
      const device = line.device(BAUD);
      await device.open();
      const scanner = new BadgeSerialReader(line.host(BAUD), { baud: BAUD, reconnect: false });
      cleanup.push(() => scanner.close());
      await scanner.open();
      await device.write(Buffer.alloc(200, 0x31)); // 200 digits, no line end
      await new Promise((r) => setTimeout(r, 100));
      // A card line split anywhere still reads as one.
      for (const part of ['00000', '00012\r', '\n']) {
        await device.write(Buffer.from(part, 'latin1'));
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await nextRead(scanner)).credential).toBe('32:12');
      expect(scanner.stats.noise).toBeGreaterThanOrEqual(1);
      await expect(scanner.readCredential()).rejects.toMatchObject({ code: 'DRIVER_NO_CARD' });
    });
  });
}
