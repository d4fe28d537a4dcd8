/**
 * Iris camera resolution: ISO/IEC 19794-6 measures an iris image by the pixels across the iris
 * (about 200 px is what its capture guidance asks for, 150 px the least), not by dpi. A
 * protocol-1 camera reports its pixels per inch at the nominal distance in DEVICE_INFO and the
 * iris radius it found in every result; the table holds each model's nominal iris diameter (and
 * ppi) for when it does not.
 *
 * Tested in test/unit/drivers/families.test.ts (iris resolution in pixels across the iris) and
 * test/unit/drivers/iris-hid/scanner.test.ts.
 */
import type { ResolutionTable, SensorResolution } from '../resolution.js';
import { resolutionOf } from '../resolution.js';

export const IRIS_HID_RESOLUTION: ResolutionTable = {
  nominal: { kind: 'iris', irisDiameterPx: 200, ppi: null },
  models: {
    // The simulator: 640×480 frames, an iris of radius 100 px, 460 ppi.
    'SIM-IRIS-1': { kind: 'iris', irisDiameterPx: 200, ppi: 460 },
  },
};

/** The camera's resolution: its model's entry, with the ppi the camera itself reports when it reports one. */
export function irisResolution(model: string, reportedPpi: number): SensorResolution {
  const r = resolutionOf(IRIS_HID_RESOLUTION, model);
  if (r.kind !== 'iris') return r;
  return reportedPpi > 0 ? { ...r, ppi: reportedPpi } : r;
}
