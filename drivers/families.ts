/**
 * The registry of scanner families: the one place that lists them. Opening a scanner, probing a
 * port, listing what can be simulated and building a simulated scanner all ask it; adding a
 * family is its folder plus one entry here (its name in `ScannerFamily` makes the compiler ask
 * for the entry).
 */
import { AgentError } from '../src/core/errors.js';
import type { ScannerFamilyEntry } from './family.js';
import type { ScannerFamily } from './scanner.js';
import type { SimulatorControl } from './simulator/control.js';
import { badgeHidFamily, badgeSerialFamily } from './badge/family.js';
import { gt521Family } from './gt521/family.js';
import { irisHidFamily } from './iris-hid/family.js';
import { r30xFamily } from './r30x/family.js';

export const FAMILIES = {
  r30x: r30xFamily,
  gt521: gt521Family,
  'iris-hid': irisHidFamily,
  'badge-serial': badgeSerialFamily,
  'badge-hid': badgeHidFamily,
} as const satisfies { [F in ScannerFamily]: ScannerFamilyEntry<F, SimulatorControl, never> };

type Families = typeof FAMILIES;

/** The simulator class of family `F` (R30xSimulator for 'r30x', ...). */
export type SimulatorOf<F extends ScannerFamily> = Families[F] extends ScannerFamilyEntry<F, infer S, infer _O> ? S : never;
/** The scanner options family `F` takes beyond its transport. */
export type ScannerOptionsOf<F extends ScannerFamily> = Families[F] extends ScannerFamilyEntry<F, infer _S, infer O> ? O : never;

/** Every family's name, in the registry's order (discovery's order too). */
export const SCANNER_FAMILIES = Object.keys(FAMILIES) as ScannerFamily[];

export function isScannerFamily(name: string): name is ScannerFamily {
  return Object.hasOwn(FAMILIES, name);
}

/** The family's entry, or DRIVER_UNKNOWN_FAMILY saying which families exist. */
export function familyEntry<F extends ScannerFamily>(family: F): Families[F];
export function familyEntry(family: string): ScannerFamilyEntry;
export function familyEntry(family: string): ScannerFamilyEntry {
  if (!isScannerFamily(family)) {
    throw new AgentError(
      'DRIVER_UNKNOWN_FAMILY',
      `no driver for scanner family "${family}"`,
      { family },
      { hint: `use ${SCANNER_FAMILIES.join(', ')}; "edge-agent devices" tells which one is attached` },
    );
  }
  return FAMILIES[family] as ScannerFamilyEntry;
}

/** The families whose devices sit on `transport` (serial ports or HID). */
export function familiesOn(transport: 'serial' | 'hid'): ScannerFamilyEntry[] {
  return Object.values(FAMILIES).filter((e) => e.transport === transport) as ScannerFamilyEntry[];
}
