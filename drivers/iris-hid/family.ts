/**
 * The protocol-1 HID iris camera's entry in the registry (families.ts).
 *
 * Tested in test/unit/drivers/families.test.ts (every family's entry, its simulated scanner
 * opened).
 */
import type { ScannerFamilyEntry } from '../family.js';
import { HidTransport } from '../transport/hid-transport.js';
import { IRIS_HID_RESOLUTION } from './models.js';
import { probeIrisHid } from './probe.js';
import { ReportId } from './protocol.js';
import { IrisHidScanner, type IrisHidScannerOptions } from './scanner.js';
import { IrisHidSimulator } from './simulator.js';

export const irisHidFamily: ScannerFamilyEntry<'iris-hid', IrisHidSimulator, Omit<IrisHidScannerOptions, 'transport'>> = {
  family: 'iris-hid',
  modality: 'iris',
  transport: 'hid',
  defaultBaud: null,
  probeBauds: [],
  resolution: IRIS_HID_RESOLUTION,
  // A HID path (/dev/hidrawN); no baud rate.
  create: (target) =>
    new IrisHidScanner({
      transport: new HidTransport({ path: target.path, inputReportId: ReportId.Input }),
      ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}),
    }),
  async probe(path, options = {}) {
    const r = await probeIrisHid(path, options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {});
    return r && { model: r.model, firmware: r.firmware, capacity: r.capacity, templates: r.templates };
  },
  // In-process on the HID seam: the simulator is the device node-hid would open. (No byte-stream
  // simulator: a HID camera cannot sit on a pty.)
  async simulate(options) {
    const simulator = new IrisHidSimulator({
      images: options.images.iris,
      pace: options.pacing ?? false,
      ...(options.model !== undefined ? { model: options.model } : {}),
    });
    const transport = new HidTransport({ path: 'sim:iris-hid', open: simulator.opener, inputReportId: ReportId.Input });
    return { scanner: new IrisHidScanner({ ...options.scanner, transport }), simulator };
  },
};
