/**
 * GT-521F32/F52 commands, one method each, over a Gt521Link. Outcomes the module reports with a
 * NACK but that are answers, not failures (slot empty for CheckEnrolled, no match for Verify and
 * Identify), come back as values; every other NACK throws its named Gt521NackError.
 */
import { AgentError } from '../../src/core/errors.js';
import type { ByteTransport } from '../transport/transport.js';
import { Gt521, type Gt521CommandCodec, type Gt521DeviceInfo } from './commands.js';
import { Gt521NackError } from './errors.js';
import { exchangeBytes, Gt521Link, wireMs, type ExchangeRequest, type Gt521LinkOptions } from './link.js';
import { BAUD_RATES, MODELS, NackCode, TEMPLATE_SIZE } from './protocol.js';

export { decodeDeviceInfo, encodeDeviceInfo, WORK_MS, type Gt521DeviceInfo } from './commands.js';

/** Serial number as printed by the vendor's tool: 16 bytes in hex, `XXXXXXXXXXXXXXXX-XXXXXXXXXXXXXXXX`. */
export function formatSerial(serial: Uint8Array): string {
  const hex = Buffer.from(serial).toString('hex').toUpperCase();
  return `${hex.slice(0, 16)}-${hex.slice(16)}`;
}

export function formatFirmware(version: number): string {
  return version.toString(16).toUpperCase().padStart(8, '0');
}

/** A command as the link runs it: its code and parameter, the data each way, its retry and time policy. */
function exchangeOf<Req, Res>(cmd: Gt521CommandCodec<Req, Res>, req: Req, sendData?: Uint8Array): ExchangeRequest {
  const receiveData = cmd.moduleData?.(req);
  return {
    command: cmd.code,
    parameter: cmd.encodeRequest(req),
    retryable: cmd.retryable,
    ...(cmd.workMs !== undefined ? { workMs: cmd.workMs } : {}),
    ...(sendData ? { sendData } : {}),
    ...(receiveData !== undefined ? { receiveData } : {}),
  };
}

/** The bulk exchanges, as the driver runs them (for benchmarks and link-floor figures). */
export const GT521_BULK = {
  GetTemplate: exchangeOf(Gt521.GetTemplate, { slot: 0 }),
  MakeTemplate: exchangeOf(Gt521.MakeTemplate, {}),
  GetImage: exchangeOf(Gt521.GetImage, {}),
  GetRawImage: exchangeOf(Gt521.GetRawImage, {}),
  SetTemplate: exchangeOf(Gt521.SetTemplate, { slot: 0, checkDuplicate: true }, new Uint8Array(TEMPLATE_SIZE)),
} as const satisfies Record<string, ExchangeRequest>;

/** Bytes on the wire, both ways, for one bulk exchange. */
export function gt521WireBytes(name: keyof typeof GT521_BULK): number {
  return exchangeBytes(GT521_BULK[name]);
}

/** The link floor of a bulk exchange: its bits on the wire ÷ the baud rate, in ms. */
export function gt521FloorMs(name: keyof typeof GT521_BULK, baud: number): number {
  return wireMs(gt521WireBytes(name), baud);
}

function checkTemplate(template: Uint8Array): void {
  if (template.length !== TEMPLATE_SIZE) {
    throw new AgentError(
      'DRIVER_BAD_TEMPLATE',
      `a GT-521 template has ${TEMPLATE_SIZE} bytes, this one ${template.length}`,
      { family: 'gt521', length: template.length },
      { hint: 'Only templates read from a GT-521 module (GetTemplate, MakeTemplate, Enroll3) can be written to one.' },
    );
  }
}

function isNack(err: unknown, ...codes: number[]): boolean {
  return err instanceof Gt521NackError && codes.includes(err.nack);
}

export class Gt521Driver {
  readonly link: Gt521Link;

  constructor(transport: ByteTransport, options: Gt521LinkOptions = {}) {
    this.link = new Gt521Link(transport, options);
  }

  get transport(): ByteTransport {
    return this.link.transport;
  }

  /** One command through its codec (and `sendData` after the ACK for uploads). */
  async #x<Req, Res>(cmd: Gt521CommandCodec<Req, Res>, req: Req, sendData?: Uint8Array): Promise<Res> {
    const r = await this.link.exchange(exchangeOf(cmd, req, sendData));
    return cmd.decodeResponse(r.parameter, r.data);
  }

  /** Open with extra info: firmware, ISO area size and serial from the data packet that follows the ACK. */
  async open(): Promise<Gt521DeviceInfo> {
    return (await this.#x(Gt521.Open, { extraInfo: true }))!;
  }

  /** Open without extra info (a bare ACK). */
  async openQuiet(): Promise<void> {
    await this.#x(Gt521.Open, { extraInfo: false });
  }

  async close(): Promise<void> {
    await this.#x(Gt521.Close, {});
  }

  /**
   * Switches the module's baud rate: the module ACKs at the old speed, then both sides switch.
   * The transport follows when it can (SerialTransport.setBaudRate).
   */
  async changeBaud(baud: number): Promise<void> {
    if (!(BAUD_RATES as readonly number[]).includes(baud)) {
      throw new AgentError(
        'DRIVER_BAD_PARAM',
        `GT-521 modules run at ${BAUD_RATES.join(', ')} baud, not ${baud}`,
        { family: 'gt521', baud },
        { hint: `Choose one of ${BAUD_RATES.join(', ')}.` },
      );
    }
    await this.#x(Gt521.ChangeBaud, { baud });
    await this.transport.setBaudRate?.(baud);
    this.link.baud = baud;
  }

  async cmosLed(on: boolean): Promise<void> {
    await this.#x(Gt521.CmosLed, { on });
  }

  async getEnrollCount(): Promise<number> {
    return (await this.#x(Gt521.GetEnrollCount, {})).count;
  }

  /** True when the slot holds a template. */
  async checkEnrolled(id: number): Promise<boolean> {
    try {
      await this.#x(Gt521.CheckEnrolled, { slot: id });
      return true;
    } catch (err) {
      if (isNack(err, NackCode.IsNotUsed)) return false;
      throw err;
    }
  }

  /** Starts an enrollment into `id`, or, with `null`, one whose template Enroll3 returns unsaved. */
  async enrollStart(id: number | null): Promise<void> {
    await this.#x(Gt521.EnrollStart, { slot: id });
  }

  async enroll1(): Promise<void> {
    await this.#x(Gt521.Enroll1, {});
  }

  async enroll2(): Promise<void> {
    await this.#x(Gt521.Enroll2, {});
  }

  /** Ends an enrollment. After `enrollStart(null)` resolves to the 498-byte template, else to null. */
  async enroll3(returnsTemplate: boolean): Promise<Buffer | null> {
    return (await this.#x(Gt521.Enroll3, { returnsTemplate })).template;
  }

  /** True when a finger is on the sensor. */
  async isPressFinger(): Promise<boolean> {
    return (await this.#x(Gt521.IsPressFinger, {})).pressed;
  }

  async deleteId(id: number): Promise<void> {
    await this.#x(Gt521.DeleteID, { slot: id });
  }

  async deleteAll(): Promise<void> {
    await this.#x(Gt521.DeleteAll, {});
  }

  /** 1:1 against a slot, with the last captured finger. */
  async verify(id: number): Promise<boolean> {
    try {
      await this.#x(Gt521.Verify, { slot: id });
      return true;
    } catch (err) {
      if (isNack(err, NackCode.VerifyFailed)) return false;
      throw err;
    }
  }

  /** 1:N over the module database, with the last captured finger; null when nothing matches. */
  async identify(): Promise<number | null> {
    try {
      return (await this.#x(Gt521.Identify, {})).slot;
    } catch (err) {
      if (isNack(err, NackCode.IdentifyFailed, NackCode.DbIsEmpty)) return null;
      throw err;
    }
  }

  /** 1:1: does `template` match the template in slot `id`? */
  async verifyTemplate(id: number, template: Uint8Array): Promise<boolean> {
    checkTemplate(template);
    try {
      await this.#x(Gt521.VerifyTemplate, { slot: id }, template);
      return true;
    } catch (err) {
      if (isNack(err, NackCode.VerifyFailed)) return false;
      throw err;
    }
  }

  /** 1:N: the slot whose template matches `template`, or null. */
  async identifyTemplate(template: Uint8Array): Promise<number | null> {
    checkTemplate(template);
    try {
      return (await this.#x(Gt521.IdentifyTemplate, {}, template)).slot;
    } catch (err) {
      if (isNack(err, NackCode.IdentifyFailed, NackCode.DbIsEmpty)) return null;
      throw err;
    }
  }

  /** Captures the finger on the sensor; `best` takes the slower, better image (for enrolment). */
  async captureFinger(best: boolean): Promise<void> {
    await this.#x(Gt521.CaptureFinger, { best });
  }

  /** The template of the last captured finger (498 bytes). */
  async makeTemplate(): Promise<Buffer> {
    return (await this.#x(Gt521.MakeTemplate, {})).data;
  }

  /** The last captured image: 258 × 202, 8 bits a pixel. */
  async getImage(): Promise<Buffer> {
    return (await this.#x(Gt521.GetImage, {})).data;
  }

  /** A live 160 × 120 preview from the sensor (no capture needed). */
  async getRawImage(): Promise<Buffer> {
    return (await this.#x(Gt521.GetRawImage, {})).data;
  }

  async getTemplate(id: number): Promise<Buffer> {
    return (await this.#x(Gt521.GetTemplate, { slot: id })).data;
  }

  /** Writes a template into slot `id` (the module checks for duplicates unless told not to). */
  async setTemplate(id: number, template: Uint8Array, options: { checkDuplicate?: boolean } = {}): Promise<void> {
    checkTemplate(template);
    await this.#x(Gt521.SetTemplate, { slot: id, checkDuplicate: options.checkDuplicate !== false }, template);
  }

  /**
   * The module's database size. The Open info does not say it, so ask CheckEnrolled about the last
   * slot of the biggest model: a GT-521F32 refuses it as out of range.
   */
  async detectCapacity(): Promise<{ model: string; capacity: number }> {
    const big = MODELS[MODELS.length - 1]!;
    try {
      await this.checkEnrolled(big.capacity - 1);
      return { ...big };
    } catch (err) {
      if (isNack(err, NackCode.InvalidPos)) {
        for (const m of MODELS) {
          if (m === big) continue;
          try {
            await this.checkEnrolled(m.capacity - 1);
            return { ...m };
          } catch (e) {
            if (!isNack(e, NackCode.InvalidPos)) throw e;
          }
        }
      }
      throw err;
    }
  }

  detach(): void {
    this.link.detach();
  }
}
