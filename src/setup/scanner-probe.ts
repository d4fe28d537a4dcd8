/**
 * The agent's two questions to the drivers during provisioning and doctor: "does the scanner at
 * this path answer?" (open it, ask what it is, close it) and "which scanners are attached?"
 * (discovery). Path `sim` means an in-process simulated scanner, and says so.
 */
import { createScanner } from '../../drivers/open-scanner.js';
import { discoverDevices } from '../../drivers/discovery.js';
import type { Scanner } from '../../drivers/scanner.js';
import type { ScannerConfig } from '../config/config.js';
import type { ScannerProbe } from './doctor/scanners.js';

export const scannerProbe: ScannerProbe = async (s) => {
  const simulated = s.path === 'sim';
  let scanner: Scanner;
  if (simulated) {
    const { createSimulatedScanner } = await import('../../drivers/simulated.js');
    const { syntheticImages } = await import('../synthetic/simulator-sources.js');
    scanner = (
      await createSimulatedScanner(s.family, {
        images: syntheticImages,
        ...(s.baud ? { baud: s.baud } : {}),
        ...(s.format ? { format: s.format } : {}),
      })
    ).scanner;
  } else {
    scanner = await createScanner({
      family: s.family,
      path: s.path,
      ...(s.baud ? { baud: s.baud } : {}),
      ...(s.format ? { format: s.format } : {}),
    });
  }
  // Closed on every path, a failed open included (a module at another baud rate or of another
  // family does not answer): a port left open keeps the command alive and locks the port.
  try {
    await scanner.open();
    const info = await scanner.info();
    // A badge reader answers nothing: an open port is all that can be checked without a card.
    const model = scanner.capabilities.credential
      ? `${info.model} (port opens; a reader says nothing until a card is read: hold one to it to check)`
      : info.model;
    return { model: simulated ? `${model} (simulated)` : model, firmware: info.firmware, serial: info.serial };
  } finally {
    await scanner.close().catch(() => undefined);
  }
};

/** The scanners discovery finds, as config entries (`port` limits it to one port). */
export async function discoverScanners(options: { port?: string; baud?: number } = {}): Promise<ScannerConfig[]> {
  const found = await discoverDevices(options);
  return found.map((d) => ({ family: d.family, path: d.path, ...(d.baud ? { baud: d.baud } : {}) }));
}
