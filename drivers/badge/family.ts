/**
 * The badge readers' entries in the registry (families.ts): `badge-serial` (a card reader on a
 * serial line) and `badge-hid` (a USB keyboard-wedge reader read through hidraw). Both read the
 * line formats of formats.ts (`target.format`, default em4100-dec), have no image (resolution
 * none) and cannot be probed: a reader says nothing until a card is read, so discovery skips
 * them (no probe rates) and the technician names the port (docs/hardware.md, Badge readers).
 *
 * Tested in test/unit/drivers/families.test.ts (every family's entry: modality, transport, bauds,
 * resolution, a simulated scanner that opens; badge readers are not probed) and
 * test/unit/drivers/badge/hid-reader.test.ts (built by its registry entry).
 */
import type { ScannerFamilyEntry } from '../family.js';
import { serialFamily } from '../family.js';
import { NO_IMAGE } from '../resolution.js';
import { HidTransport } from '../transport/hid-transport.js';
import { BadgeHidReader, type BadgeHidReaderOptions } from './hid-reader.js';
import { BadgeHidSimulator } from './hid-simulator.js';
import { BADGE_SERIAL_DEFAULT_BAUD, BadgeSerialReader, type BadgeSerialReaderOptions } from './serial-reader.js';
import { BadgeSerialSimulator } from './serial-simulator.js';

const serialEntry = serialFamily({
  family: 'badge-serial',
  modality: 'badge',
  defaultBaud: BADGE_SERIAL_DEFAULT_BAUD,
  probeBauds: [],
  resolution: NO_IMAGE,
  scanner: (transport, options: BadgeSerialReaderOptions) => new BadgeSerialReader(transport, options),
  probe: async () => null,
  simulator: (transport, o) =>
    BadgeSerialSimulator.on(transport, {
      ...(o.format !== undefined ? { format: o.format } : {}),
      ...(o.baud !== undefined ? { baud: o.baud } : {}),
      ...(o.pacing !== undefined ? { pacing: o.pacing } : {}),
      ...(o.hostBaud ? { hostBaud: o.hostBaud } : {}),
    }),
});

/** A reader answers nothing, so there is nothing to probe: no port is opened. */
export const badgeSerialFamily: ScannerFamilyEntry<'badge-serial', BadgeSerialSimulator, BadgeSerialReaderOptions> = {
  ...serialEntry,
  probeable: false,
  probe: async () => null,
};

export const badgeHidFamily: ScannerFamilyEntry<'badge-hid', BadgeHidSimulator, Omit<BadgeHidReaderOptions, 'transport'>> = {
  family: 'badge-hid',
  modality: 'badge',
  transport: 'hid',
  defaultBaud: null,
  probeBauds: [],
  resolution: NO_IMAGE,
  probeable: false,
  // A HID path (/dev/hidrawN) of a boot keyboard: reports carry no report id.
  create: (target) =>
    new BadgeHidReader({
      transport: new HidTransport({ path: target.path, numberedReports: false }),
      ...(target.format !== undefined ? { format: target.format } : {}),
    }),
  // A keyboard-wedge reader is a keyboard: nothing tells it from one without a card.
  probe: async () => null,
  async simulate(options) {
    const simulator = new BadgeHidSimulator({
      pace: options.pacing ?? false,
      ...(options.format !== undefined ? { format: options.format } : {}),
    });
    const transport = new HidTransport({ path: 'sim:badge-hid', open: simulator.opener, numberedReports: false });
    return {
      scanner: new BadgeHidReader({ ...(options.format !== undefined ? { format: options.format } : {}), ...options.scanner, transport }),
      simulator,
    };
  },
};
