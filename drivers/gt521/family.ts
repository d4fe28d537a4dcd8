/**
 * The GT-521F32/F52 family's entry in the registry (families.ts).
 *
 * Tested in test/unit/drivers/families.test.ts (every family's entry, its simulated scanner
 * opened).
 */
import { serialFamily } from '../family.js';
import { GT521_RESOLUTION } from './models.js';
import { probeGt521Transport } from './probe.js';
import { Gt521Scanner, type Gt521ScannerOptions } from './scanner.js';
import { Gt521Simulator, type Gt521Model } from './simulator.js';

export const gt521Family = serialFamily({
  family: 'gt521',
  modality: 'finger',
  defaultBaud: 9600,
  resolution: GT521_RESOLUTION,
  probeBauds: [9600, 19200, 38400, 57600, 115200],
  scanner: (transport, options: Omit<Gt521ScannerOptions, 'transport'>) => new Gt521Scanner({ ...options, transport }),
  probe: async (transport, baud, timeoutMs) => {
    const r = await probeGt521Transport(transport, baud, timeoutMs);
    return r && { model: r.model, firmware: r.firmware, capacity: r.capacity, templates: r.templates };
  },
  simulator: async (transport, o) => {
    const sim = new Gt521Simulator({
      images: o.images.finger,
      baud: o.baud,
      pace: o.pacing,
      model: o.model as Gt521Model | undefined,
      hostBaud: o.hostBaud,
    });
    await sim.attach(transport);
    return sim;
  },
});
