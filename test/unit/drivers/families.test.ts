// The registry of scanner families: every family answers the same questions, and the names the
// configuration accepts are the registry's (src/config may not import drivers/, so this test is
// what keeps the two lists in step).
import { describe, expect, it } from 'vitest';
import { FAMILIES, SCANNER_FAMILIES, familiesOn, familyEntry } from '../../../drivers/families.js';
import { DEFAULT_BAUDS, createScanner } from '../../../drivers/open-scanner.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import { resolutionOf } from '../../../drivers/resolution.js';
import { createMemoryPair } from '../../../drivers/transport/memory-transport.js';
import { decodePacket, encodePacket } from '../../../drivers/gt521/codec.js';
import { ACK, Gt521Command } from '../../../drivers/gt521/protocol.js';
import { ScannerConfigSchema } from '../../../src/config/config.js';

describe('scanner family registry', () => {
  it('lists the families the configuration accepts, no more and no fewer', () => {
    expect([...SCANNER_FAMILIES].sort()).toEqual([...ScannerConfigSchema.shape.family.options].sort());
  });

  it('gives every family a modality, a transport kind, its baud rates, its resolution and a simulated scanner that opens', async () => {
    for (const name of SCANNER_FAMILIES) {
      const entry = FAMILIES[name];
      expect(entry.family).toBe(name);
      expect(['finger', 'iris', 'badge']).toContain(entry.modality);
      // Fingers in dpi, eyes in pixels across the iris, badges no image.
      expect(entry.resolution.nominal.kind).toBe({ finger: 'dpi', iris: 'iris', badge: 'none' }[entry.modality]);
      for (const r of Object.values(entry.resolution.models)) expect(r.kind).toBe(entry.resolution.nominal.kind);
      if (entry.transport === 'serial') {
        // A family that can be probed is probed first at the speed it ships with.
        if (entry.probeable !== false) expect(entry.defaultBaud).toBe(entry.probeBauds[0]);
        else expect(entry.probeBauds).toEqual([]);
        expect(typeof entry.attachSimulator).toBe('function');
      } else {
        expect(entry.defaultBaud).toBeNull();
        expect(entry.probeBauds).toEqual([]);
      }
      const { scanner, simulator } = await familyEntry(name).simulate({ images: fallbackImages, scanner: { reconnect: false } as never });
      try {
        const info = await scanner.open();
        expect(info).toMatchObject({ family: name, modality: entry.modality });
        expect(info.resolution).toEqual(resolutionOf(entry.resolution, info.model));
        expect([scanner.family, scanner.modality]).toEqual([name, entry.modality]);
        expect([simulator.family, simulator.modality]).toEqual([name, entry.modality]);
      } finally {
        await scanner.close();
        await simulator.close();
      }
    }
  });

  it('splits the families by the ports discovery probes; badge readers cannot be probed', async () => {
    expect(familiesOn('serial').map((e) => e.family)).toEqual(['r30x', 'gt521', 'badge-serial']);
    expect(familiesOn('hid').map((e) => e.family)).toEqual(['iris-hid', 'badge-hid']);
    expect(SCANNER_FAMILIES.filter((f) => FAMILIES[f].probeable === false)).toEqual(['badge-serial', 'badge-hid']);
    expect(DEFAULT_BAUDS).toEqual({ r30x: 57600, gt521: 9600, 'badge-serial': 9600 });
    // Nothing is opened to "probe" a reader that says nothing: a port that does not exist is no error.
    expect(await familyEntry('badge-serial').probe('/dev/ttyUSB-does-not-exist')).toBeNull();
  });

  it("carries each model's sensor resolution from the datasheets: R503 508 dpi, other R30x 500, GT-521 450, iris in pixels across the iris", () => {
    expect(resolutionOf(FAMILIES.r30x.resolution, 'R503')).toEqual({ kind: 'dpi', dpi: 508 });
    expect(resolutionOf(FAMILIES.r30x.resolution, 'R503-A')).toEqual({ kind: 'dpi', dpi: 508 });
    for (const m of ['R307', 'R305', 'AS608', 'ZFM-20', 'R30x'])
      expect(resolutionOf(FAMILIES.r30x.resolution, m)).toEqual({ kind: 'dpi', dpi: 500 });
    for (const m of ['GT-521F32', 'GT-521F52']) expect(resolutionOf(FAMILIES.gt521.resolution, m)).toEqual({ kind: 'dpi', dpi: 450 });
    expect(resolutionOf(FAMILIES['iris-hid'].resolution, 'SOME-CAMERA')).toEqual({ kind: 'iris', irisDiameterPx: 200, ppi: null });
    expect(resolutionOf(FAMILIES['badge-hid'].resolution, 'x')).toEqual({ kind: 'none' });
  });

  it('builds a family scanner on a serial port without opening it', async () => {
    const r30x = await createScanner({ family: 'r30x', path: '/dev/ttyUSB-does-not-exist' });
    const gt521 = await createScanner({ family: 'gt521', path: '/dev/ttyUSB-does-not-exist', baud: 19200 });
    expect([r30x.family, gt521.family]).toEqual(['r30x', 'gt521']);
    await expect(r30x.open()).rejects.toMatchObject({ code: 'TRANSPORT_NOT_FOUND' });
  });

  it('refuses an unknown family, naming the known ones', async () => {
    expect(() => familyEntry('zk4500')).toThrow(
      expect.objectContaining({
        code: 'DRIVER_UNKNOWN_FAMILY',
        hint: expect.stringContaining('r30x, gt521, iris-hid, badge-serial, badge-hid'),
      }),
    );
    await expect(createScanner({ family: 'zk4500' as never, path: '/dev/x' })).rejects.toMatchObject({ code: 'DRIVER_UNKNOWN_FAMILY' });
  });

  it('puts a serial family simulator on any byte transport', async () => {
    const { host, device } = createMemoryPair('attach');
    const sim = await familyEntry('gt521').attachSimulator!(device, { images: fallbackImages, pacing: false });
    await host.open();
    const got = new Promise<Buffer>((r) => host.once('data', r));
    await host.write(encodePacket({ code: Gt521Command.GetEnrollCount }));
    expect(decodePacket(await got)).toMatchObject({ code: ACK, parameter: 0 });
    await sim.close();
  });
});
