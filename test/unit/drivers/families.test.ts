// The registry of scanner families: every family answers the same questions, and the names the
// configuration accepts are the registry's (src/config may not import drivers/, so this test is
// what keeps the two lists in step).
import { describe, expect, it } from 'vitest';
import { FAMILIES, SCANNER_FAMILIES, familiesOn, familyEntry } from '../../../drivers/families.js';
import { DEFAULT_BAUDS, createScanner } from '../../../drivers/open-scanner.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import { createMemoryPair } from '../../../drivers/transport/memory-transport.js';
import { decodePacket, encodePacket } from '../../../drivers/gt521/codec.js';
import { ACK, Gt521Command } from '../../../drivers/gt521/protocol.js';
import { ScannerConfigSchema } from '../../../src/config/config.js';

describe('scanner family registry', () => {
  it('lists the families the configuration accepts, no more and no fewer', () => {
    expect([...SCANNER_FAMILIES].sort()).toEqual([...ScannerConfigSchema.shape.family.options].sort());
  });

  it('gives every family a modality, a transport kind, its baud rates and a simulated scanner that opens', async () => {
    for (const name of SCANNER_FAMILIES) {
      const entry = FAMILIES[name];
      expect(entry.family).toBe(name);
      expect(['finger', 'iris']).toContain(entry.modality);
      if (entry.transport === 'serial') {
        expect(entry.defaultBaud).toBe(entry.probeBauds[0]);
        expect(typeof entry.attachSimulator).toBe('function');
      } else {
        expect(entry.defaultBaud).toBeNull();
        expect(entry.probeBauds).toEqual([]);
      }
      const { scanner, simulator } = await familyEntry(name).simulate({ images: fallbackImages, scanner: { reconnect: false } as never });
      try {
        const info = await scanner.open();
        expect(info).toMatchObject({ family: name, modality: entry.modality });
        expect([scanner.family, scanner.modality]).toEqual([name, entry.modality]);
        expect([simulator.family, simulator.modality]).toEqual([name, entry.modality]);
      } finally {
        await scanner.close();
        await simulator.close();
      }
    }
  });

  it('splits the families by the ports discovery probes', () => {
    expect(familiesOn('serial').map((e) => e.family)).toEqual(['r30x', 'gt521']);
    expect(familiesOn('hid').map((e) => e.family)).toEqual(['iris-hid']);
    expect(DEFAULT_BAUDS).toEqual({ r30x: 57600, gt521: 9600 });
  });

  it('builds a family scanner on a serial port without opening it', async () => {
    const r30x = await createScanner({ family: 'r30x', path: '/dev/ttyUSB-does-not-exist' });
    const gt521 = await createScanner({ family: 'gt521', path: '/dev/ttyUSB-does-not-exist', baud: 19200 });
    expect([r30x.family, gt521.family]).toEqual(['r30x', 'gt521']);
    await expect(r30x.open()).rejects.toMatchObject({ code: 'TRANSPORT_NOT_FOUND' });
  });

  it('refuses an unknown family, naming the known ones', async () => {
    expect(() => familyEntry('zk4500')).toThrow(expect.objectContaining({ code: 'DRIVER_UNKNOWN_FAMILY', hint: expect.stringContaining('r30x, gt521, iris-hid') }));
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
