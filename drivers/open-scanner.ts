/**
 * Opens a scanner by family and path; the registry (families.ts) knows which driver serves which
 * family.
 *
 *   const scanner = await openScanner({ family: 'r30x', path: '/dev/ttyUSB0', baud: 57600 });
 *
 * `createScanner` builds it without opening (the agent opens it under its own retry policy).
 */
import type { Scanner, ScannerFamily } from './scanner.js';
import { FAMILIES, familyEntry } from './families.js';
import type { ScannerTarget } from './family.js';

export type { ScannerTarget } from './family.js';

/** Each family's factory line speed (serial families). */
export const DEFAULT_BAUDS: Partial<Record<ScannerFamily, number>> = Object.fromEntries(
  Object.values(FAMILIES).flatMap((e) => (e.defaultBaud !== null ? [[e.family, e.defaultBaud]] : [])),
);

export async function createScanner(target: ScannerTarget): Promise<Scanner> {
  return familyEntry(target.family).create(target);
}

/** Creates and opens the scanner; resolves once the module answered. */
export async function openScanner(target: ScannerTarget): Promise<Scanner> {
  const scanner = await createScanner(target);
  await scanner.open();
  return scanner;
}
