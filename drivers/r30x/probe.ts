/**
 * Discovery probe: is there an R30x module on this port at this baud rate? Sends VfyPwd (the
 * default password 0 unless given), ReadSysPara, ReadProdInfo (where the model has it) and
 * TemplateNum. A module that refuses the password is reported as an R30x with a password set. Resolves null when nothing answers
 * like an R30x within `timeoutMs`; transport errors (no such port, no permission) are thrown so
 * discovery can say so.
 */
import { withSerialPort } from '../transport/serial-transport.js';
import type { ByteTransport } from '../transport/transport.js';
import { R30xDriver, type ProductInfo, type SystemParameters } from './driver.js';

export interface R30xProbeResult {
  model: string;
  firmware: string | null;
  serial: string | null;
  /** Null when the module has a password set and refuses to say more without it. */
  capacity: number | null;
  templates: number | null;
  packetSize: number | null;
  passwordRequired: boolean;
}

const PASSWORD_CODES = new Set(['DRIVER_R30X_PASSWORD_REQUIRED', 'DRIVER_R30X_WRONG_PASSWORD']);

function notR30x(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === 'DRIVER_TIMEOUT' || code === 'DRIVER_CHECKSUM' || code === 'DRIVER_PROTOCOL' || code.startsWith('DRIVER_R30X_');
}

export async function probeR30xTransport(
  transport: ByteTransport,
  baud: number,
  timeoutMs: number,
  password = 0,
): Promise<R30xProbeResult | null> {
  const driver = new R30xDriver(transport, { baud, timeoutMs, retries: 0, password });
  try {
    let params: SystemParameters;
    try {
      await driver.verifyPassword();
      params = await driver.readSystemParameters();
    } catch (err) {
      // It answered like an R30x, but wants its handshake password first.
      if (PASSWORD_CODES.has((err as { code?: string }).code ?? '')) {
        return {
          model: 'R30x (password set)',
          firmware: null,
          serial: null,
          capacity: null,
          templates: null,
          packetSize: null,
          passwordRequired: true,
        };
      }
      throw err;
    }
    let product: ProductInfo | null = null;
    try {
      product = await driver.readProductInfo();
    } catch (err) {
      if (!notR30x(err)) throw err;
    }
    const templates = await driver.templateCount();
    return {
      model: product?.model || 'R30x',
      firmware: product ? product.hardwareVersion : null,
      serial: product?.serial || null,
      capacity: params.capacity,
      templates,
      packetSize: params.packetSize,
      passwordRequired: false,
    };
  } catch (err) {
    if (notR30x(err)) return null;
    throw err;
  }
}

export function probeR30x(path: string, baud: number, timeoutMs: number): Promise<R30xProbeResult | null> {
  return withSerialPort(path, baud, (transport) => probeR30xTransport(transport, baud, timeoutMs));
}
