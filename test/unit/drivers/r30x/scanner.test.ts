import { createSimulatedScanner } from '../../../../drivers/simulated.js';
import { fallbackImages } from '../../../../drivers/simulator/images.js';
import type { R30xScanner } from '../../../../drivers/r30x/scanner.js';
import { r30xCommandSuite, testImage } from './scanner.contract.js';

r30xCommandSuite('in-process (memory pair)', async () => {
  const { scanner, simulator } = await createSimulatedScanner('r30x', {
    images: { ...fallbackImages, finger: testImage },
    scanner: { timeoutMs: 200, pollMs: 20 },
  });
  await scanner.open();
  return { scanner: scanner as R30xScanner, simulator, close: () => scanner.close() };
});
