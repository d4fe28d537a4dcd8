/**
 * GT-521F32/F52 commands, one method each, over a Gt521Link. Outcomes the module reports with a
 * NACK but that are answers, not failures (slot empty for CheckEnrolled, no match for Verify and
 * Identify), come back as values; every other NACK throws its named Gt521NackError.
 */
import { AgentError } from '../../src/core/errors.js';
import type { ByteTransport } from '../transport/transport.js';
import { Gt521NackError } from './errors.js';
import { exchangeBytes, Gt521Link, wireMs, type ExchangeRequest, type Gt521LinkOptions } from './link.js';
import {
  BAUD_RATES,
  DEVINFO_SIZE,
  ENROLL_NO_SAVE,
  Gt521Command as C,
  IMAGE_SIZE,
  MODELS,
  NackCode,
  RAW_IMAGE_SIZE,
  SET_TEMPLATE_NO_DUP_CHECK,
  TEMPLATE_SIZE,
} from './protocol.js';

export interface Gt521DeviceInfo {
  /** Firmware version as the module reports it (u32). */
  firmwareVersion: number;
  /** Size of the ISO template area in bytes. */
  isoAreaMaxSize: number;
  /** 16-byte device serial number. */
  serialNumber: Buffer;
}

/** Module work times added to timeouts (ms): a capture, a 1:N search over 3000 slots. */
export const WORK_MS = { capture: 1500, search: 1500, enroll: 1500 } as const;

/** Serial number as printed by the vendor's tool: 16 bytes in hex, `XXXXXXXXXXXXXXXX-XXXXXXXXXXXXXXXX`. */
export function formatSerial(serial: Uint8Array): string {
  const hex = Buffer.from(serial).toString('hex').toUpperCase();
  return `${hex.slice(0, 16)}-${hex.slice(16)}`;
}

export function formatFirmware(version: number): string {
  return version.toString(16).toUpperCase().padStart(8, '0');
}

export function decodeDeviceInfo(data: Buffer): Gt521DeviceInfo {
  if (data.length !== DEVINFO_SIZE) {
    throw new AgentError('DRIVER_FRAME', `GT-521 Open info has ${data.length} bytes, expected ${DEVINFO_SIZE}`, { family: 'gt521' }, { hint: 'Check the module model and firmware.' });
  }
  return { firmwareVersion: data.readUInt32LE(0), isoAreaMaxSize: data.readUInt32LE(4), serialNumber: Buffer.from(data.subarray(8, 24)) };
}

export function encodeDeviceInfo(info: Gt521DeviceInfo): Buffer {
  const buf = Buffer.alloc(DEVINFO_SIZE);
  buf.writeUInt32LE(info.firmwareVersion >>> 0, 0);
  buf.writeUInt32LE(info.isoAreaMaxSize >>> 0, 4);
  Buffer.from(info.serialNumber).copy(buf, 8, 0, 16);
  return buf;
}

/** The bulk exchanges, as the driver runs them (for benchmarks and link-floor figures). */
export const GT521_BULK = {
  GetTemplate: { command: C.GetTemplate, receiveData: TEMPLATE_SIZE },
  MakeTemplate: { command: C.MakeTemplate, receiveData: TEMPLATE_SIZE },
  GetImage: { command: C.GetImage, receiveData: IMAGE_SIZE },
  GetRawImage: { command: C.GetRawImage, receiveData: RAW_IMAGE_SIZE },
  SetTemplate: { command: C.SetTemplate, sendData: new Uint8Array(TEMPLATE_SIZE) },
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
    throw new AgentError('DRIVER_BAD_TEMPLATE', `a GT-521 template has ${TEMPLATE_SIZE} bytes, this one ${template.length}`, { family: 'gt521', length: template.length }, { hint: 'Only templates read from a GT-521 module (GetTemplate, MakeTemplate, Enroll3) can be written to one.' });
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

  #x(req: ExchangeRequest) {
    return this.link.exchange(req);
  }

  /** Open with extra info: firmware, ISO area size and serial from the data packet that follows the ACK. */
  async open(): Promise<Gt521DeviceInfo> {
    const r = await this.#x({ command: C.Open, parameter: 1, receiveData: DEVINFO_SIZE, retryable: true });
    return decodeDeviceInfo(r.data!);
  }

  /** Open without extra info (a bare ACK). */
  async openQuiet(): Promise<void> {
    await this.#x({ command: C.Open, parameter: 0, retryable: true });
  }

  async close(): Promise<void> {
    await this.#x({ command: C.Close, retryable: true });
  }

  /**
   * Switches the module's baud rate: the module ACKs at the old speed, then both sides switch.
   * The transport follows when it can (SerialTransport.setBaudRate).
   */
  async changeBaud(baud: number): Promise<void> {
    if (!(BAUD_RATES as readonly number[]).includes(baud)) {
      throw new AgentError('DRIVER_BAD_PARAM', `GT-521 modules run at ${BAUD_RATES.join(', ')} baud, not ${baud}`, { family: 'gt521', baud }, { hint: `Choose one of ${BAUD_RATES.join(', ')}.` });
    }
    await this.#x({ command: C.ChangeBaud, parameter: baud });
    const t = this.transport as ByteTransport & { setBaudRate?: (b: number) => Promise<void> };
    if (typeof t.setBaudRate === 'function') await t.setBaudRate(baud);
    this.link.baud = baud;
  }

  async cmosLed(on: boolean): Promise<void> {
    await this.#x({ command: C.CmosLed, parameter: on ? 1 : 0, retryable: true });
  }

  async getEnrollCount(): Promise<number> {
    return (await this.#x({ command: C.GetEnrollCount, retryable: true })).parameter;
  }

  /** True when the slot holds a template. */
  async checkEnrolled(id: number): Promise<boolean> {
    try {
      await this.#x({ command: C.CheckEnrolled, parameter: id, retryable: true });
      return true;
    } catch (err) {
      if (isNack(err, NackCode.IsNotUsed)) return false;
      throw err;
    }
  }

  /** Starts an enrolment into `id`, or, with `null`, one whose template Enroll3 returns unsaved. */
  async enrollStart(id: number | null): Promise<void> {
    await this.#x({ command: C.EnrollStart, parameter: id === null ? ENROLL_NO_SAVE : id });
  }

  async enroll1(): Promise<void> {
    await this.#x({ command: C.Enroll1, workMs: WORK_MS.enroll });
  }

  async enroll2(): Promise<void> {
    await this.#x({ command: C.Enroll2, workMs: WORK_MS.enroll });
  }

  /** Ends an enrolment. After `enrollStart(null)` resolves to the 498-byte template, else to null. */
  async enroll3(returnsTemplate: boolean): Promise<Buffer | null> {
    const r = await this.#x({ command: C.Enroll3, workMs: WORK_MS.enroll, ...(returnsTemplate ? { receiveData: TEMPLATE_SIZE } : {}) });
    return r.data;
  }

  /** True when a finger is on the sensor (the module answers 0 for pressed). */
  async isPressFinger(): Promise<boolean> {
    return (await this.#x({ command: C.IsPressFinger, retryable: true })).parameter === 0;
  }

  async deleteId(id: number): Promise<void> {
    await this.#x({ command: C.DeleteID, parameter: id });
  }

  async deleteAll(): Promise<void> {
    await this.#x({ command: C.DeleteAll });
  }

  /** 1:1 against a slot, with the last captured finger. */
  async verify(id: number): Promise<boolean> {
    try {
      await this.#x({ command: C.Verify, parameter: id, workMs: WORK_MS.search, retryable: true });
      return true;
    } catch (err) {
      if (isNack(err, NackCode.VerifyFailed)) return false;
      throw err;
    }
  }

  /** 1:N over the module database, with the last captured finger; null when nothing matches. */
  async identify(): Promise<number | null> {
    try {
      return (await this.#x({ command: C.Identify, workMs: WORK_MS.search, retryable: true })).parameter;
    } catch (err) {
      if (isNack(err, NackCode.IdentifyFailed, NackCode.DbIsEmpty)) return null;
      throw err;
    }
  }

  /** 1:1: does `template` match the template in slot `id`? */
  async verifyTemplate(id: number, template: Uint8Array): Promise<boolean> {
    checkTemplate(template);
    try {
      await this.#x({ command: C.VerifyTemplate, parameter: id, sendData: template, workMs: WORK_MS.search, retryable: true });
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
      return (await this.#x({ command: C.IdentifyTemplate, sendData: template, workMs: WORK_MS.search, retryable: true })).parameter;
    } catch (err) {
      if (isNack(err, NackCode.IdentifyFailed, NackCode.DbIsEmpty)) return null;
      throw err;
    }
  }

  /** Captures the finger on the sensor; `best` takes the slower, better image (for enrolment). */
  async captureFinger(best: boolean): Promise<void> {
    await this.#x({ command: C.CaptureFinger, parameter: best ? 1 : 0, workMs: WORK_MS.capture, retryable: true });
  }

  /** The template of the last captured finger (498 bytes). */
  async makeTemplate(): Promise<Buffer> {
    return (await this.#x({ command: C.MakeTemplate, receiveData: TEMPLATE_SIZE, workMs: WORK_MS.enroll, retryable: true })).data!;
  }

  /** The last captured image: 258 × 202, 8 bits a pixel. */
  async getImage(): Promise<Buffer> {
    return (await this.#x({ command: C.GetImage, receiveData: IMAGE_SIZE, retryable: true })).data!;
  }

  /** A live 160 × 120 preview from the sensor (no capture needed). */
  async getRawImage(): Promise<Buffer> {
    return (await this.#x({ command: C.GetRawImage, receiveData: RAW_IMAGE_SIZE, workMs: WORK_MS.capture, retryable: true })).data!;
  }

  async getTemplate(id: number): Promise<Buffer> {
    return (await this.#x({ command: C.GetTemplate, parameter: id, receiveData: TEMPLATE_SIZE, retryable: true })).data!;
  }

  /** Writes a template into slot `id` (the module checks for duplicates unless told not to). */
  async setTemplate(id: number, template: Uint8Array, options: { checkDuplicate?: boolean } = {}): Promise<void> {
    checkTemplate(template);
    const flag = options.checkDuplicate === false ? SET_TEMPLATE_NO_DUP_CHECK : 0;
    await this.#x({ command: C.SetTemplate, parameter: (id | flag) >>> 0, sendData: template });
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
