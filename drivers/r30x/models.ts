/**
 * R30x-family sensor resolutions by model, from the makers' datasheets: the R503 (capacitive,
 * 192×192 array) is given as 508 dpi, the optical R307 and R305, the AS608 and the ZFM-20 as
 * 500 dpi. A module that does not name itself (no ReadProdInfo, model "R30x") is taken at the
 * family's 500 dpi. UpImage sends 256×288 pixels whatever the model.
 *
 * Tested in test/unit/drivers/resolution.test.ts (the resolution comes from the module's model) and
 * test/unit/drivers/families.test.ts.
 */
import type { ResolutionTable } from '../resolution.js';

export const R30X_RESOLUTION: ResolutionTable = {
  nominal: { kind: 'dpi', dpi: 500 },
  models: {
    R503: { kind: 'dpi', dpi: 508 },
    R307: { kind: 'dpi', dpi: 500 },
    R305: { kind: 'dpi', dpi: 500 },
    AS608: { kind: 'dpi', dpi: 500 },
    'ZFM-20': { kind: 'dpi', dpi: 500 },
  },
};
