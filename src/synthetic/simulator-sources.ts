/**
 * The scanner simulators' images of record, wired in by the callers of `drivers/` (the `simulate`
 * command, the daemon's simulated scanners and so the embedded demo, provisioning's `sim` probe,
 * tests and benchmarks): seeded synthetic fingers with real ridges and minutiae (R30x size,
 * 256×288, fitted by each simulator to its sensor), and synthetic eyes at 640×480 with their
 * pupil and iris circles. `drivers/` itself knows no renderer (its simulators take a source).
 *
 * Tested in test/unit/synthetic/finger-image.test.ts (the simulators pick the renderer up) and
 * test/unit/drivers/simulated.test.ts (the simulated GT-521 and iris camera on these images).
 */
import type { SimulatorImages } from '../../drivers/simulator/images.js';
import { renderEye } from './eye-image.js';
import { renderFingerImage } from './finger-image.js';

export const syntheticImages: SimulatorImages = {
  finger: (fingerId, impression) => renderFingerImage(fingerId, impression),
  iris: (eyeId, impression) => renderEye(eyeId, impression, { width: 640, height: 480 }),
};
