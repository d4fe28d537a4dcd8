/**
 * The R30x / ZFM / AS608 family's entry in the registry (families.ts).
 *
 * Tested in test/unit/drivers/families.test.ts (every family's entry, its simulated scanner
 * opened).
 */
import { serialFamily } from '../family.js';
import { R30X_RESOLUTION } from './models.js';
import { probeR30xTransport } from './probe.js';
import { R30xScanner, type R30xScannerOptions } from './scanner.js';
import { R30xSimulator, type R30xModel } from './simulator.js';

export const r30xFamily = serialFamily({
  family: 'r30x',
  modality: 'finger',
  defaultBaud: 57600,
  resolution: R30X_RESOLUTION,
  probeBauds: [57600, 9600, 19200, 38400, 115200],
  scanner: (transport, options: R30xScannerOptions) => new R30xScanner(transport, options),
  probe: async (transport, baud, timeoutMs) => {
    const r = await probeR30xTransport(transport, baud, timeoutMs);
    return r && { model: r.model, firmware: r.firmware, capacity: r.capacity, templates: r.templates };
  },
  simulator: async (transport, o) =>
    new R30xSimulator(transport, {
      imageSource: o.images.finger,
      baud: o.baud,
      pacing: o.pacing,
      model: o.model as R30xModel | undefined,
      capacity: o.capacity,
      password: o.password,
      hostBaud: o.hostBaud,
    }),
});
