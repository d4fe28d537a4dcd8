// The keyboard-wedge badge reader on the HID seam (this kernel has no /dev/uhid): the real
// HidTransport and BadgeHidReader read what the simulator types as boot-keyboard reports, with
// each fault switch; the family's registry entry builds both.
import { afterEach, describe, expect, it } from 'vitest';
import { BadgeHidReader } from '../../../../drivers/badge/hid-reader.js';
import { BadgeHidSimulator } from '../../../../drivers/badge/hid-simulator.js';
import { createSimulatedScanner } from '../../../../drivers/simulated.js';
import { createScanner } from '../../../../drivers/open-scanner.js';
import { fallbackImages } from '../../../../drivers/simulator/images.js';
import { HidTransport } from '../../../../drivers/transport/hid-transport.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function setup(format?: string) {
  const simulator = new BadgeHidSimulator({ pace: true, reportIntervalMs: 1, ...(format ? { format } : {}) });
  const reader = new BadgeHidReader({
    transport: new HidTransport({ path: 'sim:badge-hid', open: simulator.opener, numberedReports: false }),
    ...(format ? { format } : {}),
    holdOffMs: 0,
    reconnect: { baseMs: 20, capMs: 60 },
  });
  cleanup.push(
    () => simulator.close(),
    () => reader.close(),
  );
  await reader.open();
  return { simulator, reader };
}

async function next(reader: BadgeHidReader) {
  expect(await reader.waitForPresence({ timeoutMs: 2000 })).toBe(true);
  return reader.readCredential();
}

describe('keyboard-wedge badge reader', () => {
  it('reads the line the reader types, in decimal and as Wiegand facility,card or bits', async () => {
    const { simulator, reader } = await setup();
    expect(await reader.info()).toMatchObject({
      family: 'badge-hid',
      modality: 'badge',
      transport: 'hid',
      baud: null,
      resolution: { kind: 'none' },
    });
    simulator.present(8844356);
    expect(await next(reader)).toEqual({ credential: '32:8844356', format: 'em4100-dec' });
    // 10 digits and Enter (the line's CR LF is one key), each pressed and released.
    await expect.poll(() => simulator.reportsSent).toBe(22);
    const w = await setup('wiegand26');
    w.simulator.present(123 * 65536 + 4567);
    expect(await next(w.reader)).toEqual({ credential: `24:${123 * 65536 + 4567}`, format: 'wiegand26' });
  });

  it('drops typed noise, asks again after a broken parity or a lost key, and reads the next card', async () => {
    const { simulator, reader } = await setup('wiegand34');
    simulator.setFault('garbage', 1);
    simulator.present(1);
    expect((await next(reader)).credential).toBe('32:1');
    expect(reader.stats.noise).toBe(1);
    simulator.setFault('bad-checksum', 1);
    simulator.present(2);
    await expect(next(reader)).rejects.toMatchObject({ code: 'DRIVER_CHECKSUM' });
    simulator.setFault('dropped-bytes', 1);
    simulator.present(3);
    await expect(next(reader)).rejects.toMatchObject({ code: 'DRIVER_PROTOCOL' });
    simulator.present(4);
    expect((await next(reader)).credential).toBe('32:4');
  });

  it('holds its keys while stalled, goes away when unplugged and is read again once plugged back', async () => {
    const { simulator, reader } = await setup();
    simulator.setFault('stall', true);
    simulator.present(9);
    expect(await reader.waitForPresence({ timeoutMs: 200 })).toBe(false);
    simulator.setFault('stall', false);
    expect((await next(reader)).credential).toBe('32:9');
    const gone = new Promise<Error>((r) => reader.once('disconnect', r));
    const back = new Promise((r) => reader.once('reconnect', r));
    simulator.setFault('unplug', true);
    expect((await gone).message).toMatch(/went away/);
    simulator.replug();
    await back;
    simulator.present(10);
    expect((await next(reader)).credential).toBe('32:10');
  });

  it('refuses the STX/ETX format, which a keyboard cannot type', () => {
    expect(() => new BadgeHidSimulator({ format: 'em4100-hex' })).toThrow(expect.objectContaining({ code: 'DRIVER_BAD_ARGUMENT' }));
  });

  it('is built by its registry entry, simulated in-process and on a real path', async () => {
    const { scanner, simulator } = await createSimulatedScanner('badge-hid', {
      images: fallbackImages,
      format: 'wiegand26',
      pacing: false,
    });
    cleanup.push(
      () => simulator.close(),
      () => scanner.close(),
    );
    await scanner.open();
    simulator.present(77);
    expect(await scanner.waitForPresence({ timeoutMs: 1000 })).toBe(true);
    expect(await scanner.readCredential!()).toEqual({ credential: '24:77', format: 'wiegand26' });
    await expect(scanner.captureImage()).rejects.toMatchObject({ code: 'DRIVER_UNSUPPORTED' });
    const real = await createScanner({ family: 'badge-hid', path: '/dev/hidraw-does-not-exist' });
    await expect(real.open()).rejects.toMatchObject({ code: 'TRANSPORT_NOT_FOUND' });
  });
});
