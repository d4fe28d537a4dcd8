/**
 * Discovery probe: is there an R30x module on this port at this baud rate? Sends ReadSysPara
 * (and ReadProdInfo where the model has it) and TemplateNum. Resolves null when nothing answers
 * like an R30x within `timeoutMs`; transport errors (no such port, no permission) are thrown so
 * discovery can say so.
 */
import { SerialTransport } from '../transport/serial-transport.js';
import type { ByteTransport } from '../transport/transport.js';
import { R30xDriver, type ProductInfo } from './driver.js';

export interface R30xProbeResult {
  model: string;
  firmware: string | null;
  serial: string | null;
  capacity: number;
  templates: number;
  packetSize: number;
}

function notR30x(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === 'DRIVER_TIMEOUT' || code === 'DRIVER_CHECKSUM' || code === 'DRIVER_PROTOCOL' || code.startsWith('DRIVER_R30X_');
}

export async function probeR30xTransport(transport: ByteTransport, baud: number, timeoutMs: number, password = 0): Promise<R30xProbeResult | null> {
  const driver = new R30xDriver(transport, { baud, timeoutMs, retries: 0, password });
  try {
    const params = await driver.readSystemParameters();
    let product: ProductInfo | null = null;
    try {
      product = await driver.readProductInfo();
    } catch (err) {
      if (!notR30x(err)) throw err;
    }
    let templates: number;
    try {
      templates = await driver.templateCount();
    } catch (err) {
      if ((err as { code?: string }).code !== 'DRIVER_R30X_PASSWORD_REQUIRED') throw err;
      templates = -1;
    }
    return {
      model: product?.model || 'R30x',
      firmware: product ? product.hardwareVersion : null,
      serial: product?.serial || null,
      capacity: params.capacity,
      templates,
      packetSize: params.packetSize,
    };
  } catch (err) {
    if (notR30x(err)) return null;
    throw err;
  }
}

export async function probeR30x(path: string, baud: number, timeoutMs: number): Promise<R30xProbeResult | null> {
  const transport = new SerialTransport({ path, baud });
  await transport.open();
  try {
    return await probeR30xTransport(transport, baud, timeoutMs);
  } finally {
    await transport.close();
  }
}
