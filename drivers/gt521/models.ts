/**
 * GT-521 sensor resolution by model: the datasheets give both the GT-521F32 and the GT-521F52
 * (the same optical sensor, a 258×202 image over a 14 × 12.5 mm window) as 450 dpi.
 *
 * Tested in test/unit/drivers/families.test.ts (each model's sensor resolution from the datasheets)
 * and test/unit/drivers/gt521/scanner.test.ts.
 */
import type { ResolutionTable } from '../resolution.js';

export const GT521_RESOLUTION: ResolutionTable = {
  nominal: { kind: 'dpi', dpi: 450 },
  models: {
    'GT-521F32': { kind: 'dpi', dpi: 450 },
    'GT-521F52': { kind: 'dpi', dpi: 450 },
  },
};
