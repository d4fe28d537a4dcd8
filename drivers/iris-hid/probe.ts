/**
 * Discovery probe for HID iris cameras: opens the HID device, reads the DEVICE_INFO feature
 * report and accepts it when it is a protocol-1 iris camera. Resolves null for any other HID
 * device (the report is refused, malformed, or does not answer within `timeoutMs`).
 */
import { withTimeout } from '../../src/core/time.js';
import { HidTransport, type HidOpener } from '../transport/hid-transport.js';
import { IrisHidDriver } from './driver.js';
import { PROTOCOL_VERSION, ReportId } from './protocol.js';

export interface IrisHidProbeResult {
  model: string;
  firmware: string;
  serial: string;
  capacity: null;
  templates: null;
}

export async function probeIrisHid(
  path: string,
  options: { timeoutMs?: number; open?: HidOpener } = {},
): Promise<IrisHidProbeResult | null> {
  const transport = new HidTransport({ path, inputReportId: ReportId.Input, ...(options.open ? { open: options.open } : {}) });
  try {
    await withTimeout(transport.open(), options.timeoutMs ?? 1000);
  } catch {
    return null;
  }
  const driver = new IrisHidDriver(transport);
  try {
    const info = await withTimeout(driver.deviceInfo(), options.timeoutMs ?? 1000);
    if (info.protocolVersion !== PROTOCOL_VERSION || info.sensorWidth === 0 || info.sensorHeight === 0) return null;
    return { model: info.model, firmware: info.firmware, serial: info.serial, capacity: null, templates: null };
  } catch {
    return null;
  } finally {
    driver.detach();
    await transport.close();
  }
}
