/**
 * One codec per GT-521 command, used by both ends of the wire: the driver encodes the request and
 * decodes the answer, the simulator decodes the request and encodes the answer, so no command's
 * parameter, output or data layout is written twice. (In the spirit of zwave-js's message classes
 * with `serialize()` and `from(raw)`; here one object per command code, found with
 * `GT521_COMMANDS`.)
 *
 * On the wire a request is the command packet's u32 parameter, plus for uploads a data packet the
 * host sends once the module has ACKed (`hostData` bytes: a template, opaque to the codec). An
 * answer is the ACK's u32 output parameter, plus for some requests a data packet from the module
 * (`moduleData(req)` bytes). A NACK carries an error code instead (errors.ts names them).
 *
 * Each codec also says what the driver needs to run the command well: whether it is safe to send
 * again after a damaged or missing answer (`retryable`), and how long the module works on it
 * before answering (`workMs`, added to the exchange's timeout).
 */
import { AgentError } from '../../src/core/errors.js';
import {
  DEVINFO_SIZE,
  ENROLL_NO_SAVE,
  Gt521Command,
  IMAGE_SIZE,
  NackCode,
  RAW_IMAGE_SIZE,
  SET_TEMPLATE_NO_DUP_CHECK,
  TEMPLATE_SIZE,
  type Gt521CommandName,
} from './protocol.js';

/** Module work times added to timeouts (ms): a capture, a 1:N search over 3000 slots, an enrolment step. */
export const WORK_MS = { capture: 1500, search: 1500, enroll: 1500 } as const;

export interface Gt521CommandCodec<Req, Res> {
  readonly name: Gt521CommandName;
  readonly code: number;
  /** Safe to send again after a checksum error or a timeout. */
  readonly retryable: boolean;
  /** Time the module itself needs before it answers (ms). */
  readonly workMs?: number;
  /** Bytes of the data packet the host sends after the module's ACK (uploads). */
  readonly hostData?: number;
  /** Bytes of the data packet the module sends after its ACK to `req`, if it sends one. */
  moduleData?(req: Req): number | undefined;
  /** The request → the command packet's parameter. */
  encodeRequest(req: Req): number;
  decodeRequest(parameter: number): Req;
  /** The answer → the ACK's output parameter and the data packet that follows it, if any. */
  encodeResponse(res: Res): { parameter: number; data?: Uint8Array };
  decodeResponse(parameter: number, data: Buffer | null): Res;
}

export interface Gt521DeviceInfo {
  /** Firmware version as the module reports it (u32). */
  firmwareVersion: number;
  /** Size of the ISO template area in bytes. */
  isoAreaMaxSize: number;
  /** 16-byte device serial number. */
  serialNumber: Buffer;
}

export function decodeDeviceInfo(data: Buffer): Gt521DeviceInfo {
  if (data.length !== DEVINFO_SIZE) {
    throw new AgentError(
      'DRIVER_FRAME',
      `GT-521 Open info has ${data.length} bytes, expected ${DEVINFO_SIZE}`,
      { family: 'gt521' },
      { hint: 'Check the module model and firmware.' },
    );
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

type Empty = Record<string, never>;

/** An answer that is only an ACK (output parameter 0, no data). */
const ackOnly = { encodeResponse: () => ({ parameter: 0 }), decodeResponse: (): Empty => ({}) };
/** A request with no parameter. */
const noParameter = { encodeRequest: () => 0, decodeRequest: (): Empty => ({}) };
/** A request naming one slot. */
const slotParameter = { encodeRequest: ({ slot }: { slot: number }) => slot, decodeRequest: (slot: number) => ({ slot }) };
/** An answer naming a slot (1:N search). */
const slotAnswer = { encodeResponse: ({ slot }: { slot: number }) => ({ parameter: slot }), decodeResponse: (slot: number) => ({ slot }) };

function missingData(name: string): AgentError {
  return new AgentError(
    'DRIVER_FRAME',
    `GT-521 ${name}: the ACK came without its data packet`,
    { family: 'gt521', command: name },
    { hint: 'Check the module model and firmware.' },
  );
}

/** An answer that is a data packet of `bytes` (a template or an image), always sent. */
function bulk<Req>(
  name: Gt521CommandName,
  bytes: number,
): Pick<Gt521CommandCodec<Req, { data: Buffer }>, 'moduleData' | 'encodeResponse' | 'decodeResponse'> {
  return {
    moduleData: () => bytes,
    encodeResponse: ({ data }) => ({ parameter: 0, data }),
    decodeResponse: (_p, data) => {
      if (!data) throw missingData(name);
      return { data };
    },
  };
}

function command<Req, Res>(name: Gt521CommandName, codec: Omit<Gt521CommandCodec<Req, Res>, 'name' | 'code'>): Gt521CommandCodec<Req, Res> {
  return { name, code: Gt521Command[name], ...codec };
}

export const Gt521 = {
  /** Open; with `extraInfo` the module follows its ACK with firmware, ISO area size and serial. */
  Open: command<{ extraInfo: boolean }, Gt521DeviceInfo | null>('Open', {
    retryable: true,
    moduleData: ({ extraInfo }) => (extraInfo ? DEVINFO_SIZE : undefined),
    encodeRequest: ({ extraInfo }) => (extraInfo ? 1 : 0),
    decodeRequest: (p) => ({ extraInfo: p !== 0 }),
    encodeResponse: (info) => ({ parameter: 0, ...(info ? { data: encodeDeviceInfo(info) } : {}) }),
    decodeResponse: (_p, data) => (data ? decodeDeviceInfo(data) : null),
  }),
  Close: command<Empty, Empty>('Close', { retryable: true, ...noParameter, ...ackOnly }),
  /** The module ACKs at the old speed, then both sides switch. */
  ChangeBaud: command<{ baud: number }, Empty>('ChangeBaud', {
    retryable: false,
    encodeRequest: ({ baud }) => baud,
    decodeRequest: (baud) => ({ baud }),
    ...ackOnly,
  }),
  CmosLed: command<{ on: boolean }, Empty>('CmosLed', {
    retryable: true,
    encodeRequest: ({ on }) => (on ? 1 : 0),
    decodeRequest: (p) => ({ on: p !== 0 }),
    ...ackOnly,
  }),
  GetEnrollCount: command<Empty, { count: number }>('GetEnrollCount', {
    retryable: true,
    ...noParameter,
    encodeResponse: ({ count }) => ({ parameter: count }),
    decodeResponse: (count) => ({ count }),
  }),
  /** ACK: the slot holds a template; NACK_IS_NOT_USED: it is empty. */
  CheckEnrolled: command<{ slot: number }, Empty>('CheckEnrolled', { retryable: true, ...slotParameter, ...ackOnly }),
  /** Starts an enrollment into `slot`, or (null) one whose template Enroll3 returns unsaved. */
  EnrollStart: command<{ slot: number | null }, Empty>('EnrollStart', {
    retryable: false,
    encodeRequest: ({ slot }) => (slot === null ? ENROLL_NO_SAVE : slot),
    decodeRequest: (p) => ({ slot: p === ENROLL_NO_SAVE ? null : p }),
    ...ackOnly,
  }),
  Enroll1: command<Empty, Empty>('Enroll1', { retryable: false, workMs: WORK_MS.enroll, ...noParameter, ...ackOnly }),
  Enroll2: command<Empty, Empty>('Enroll2', { retryable: false, workMs: WORK_MS.enroll, ...noParameter, ...ackOnly }),
  /**
   * Ends an enrollment. After EnrollStart(null) the module sends the template, else nothing: the
   * request does not say which, so the one who started the enrollment does (`returnsTemplate`).
   */
  Enroll3: command<{ returnsTemplate: boolean }, { template: Buffer | null }>('Enroll3', {
    retryable: false,
    workMs: WORK_MS.enroll,
    moduleData: ({ returnsTemplate }) => (returnsTemplate ? TEMPLATE_SIZE : undefined),
    encodeRequest: () => 0,
    decodeRequest: () => ({ returnsTemplate: false }),
    encodeResponse: ({ template }) => ({ parameter: 0, ...(template ? { data: template } : {}) }),
    decodeResponse: (_p, template) => ({ template }),
  }),
  /** The output parameter is 0 while a finger is pressed, NACK_FINGER_IS_NOT_PRESSED's code when not. */
  IsPressFinger: command<Empty, { pressed: boolean }>('IsPressFinger', {
    retryable: true,
    ...noParameter,
    encodeResponse: ({ pressed }) => ({ parameter: pressed ? 0 : NackCode.FingerIsNotPressed }),
    decodeResponse: (p) => ({ pressed: p === 0 }),
  }),
  DeleteID: command<{ slot: number }, Empty>('DeleteID', { retryable: false, ...slotParameter, ...ackOnly }),
  DeleteAll: command<Empty, Empty>('DeleteAll', { retryable: false, ...noParameter, ...ackOnly }),
  /** 1:1 of the last capture against a slot: ACK, or NACK_VERIFY_FAILED. */
  Verify: command<{ slot: number }, Empty>('Verify', { retryable: true, workMs: WORK_MS.search, ...slotParameter, ...ackOnly }),
  /** 1:N of the last capture: the matching slot, or NACK_IDENTIFY_FAILED. */
  Identify: command<Empty, { slot: number }>('Identify', { retryable: true, workMs: WORK_MS.search, ...noParameter, ...slotAnswer }),
  /** 1:1 of an uploaded template against a slot. */
  VerifyTemplate: command<{ slot: number }, Empty>('VerifyTemplate', {
    retryable: true,
    workMs: WORK_MS.search,
    hostData: TEMPLATE_SIZE,
    ...slotParameter,
    ...ackOnly,
  }),
  /** 1:N of an uploaded template. */
  IdentifyTemplate: command<Empty, { slot: number }>('IdentifyTemplate', {
    retryable: true,
    workMs: WORK_MS.search,
    hostData: TEMPLATE_SIZE,
    ...noParameter,
    ...slotAnswer,
  }),
  /** `best`: the slower, better image (for enrolment). */
  CaptureFinger: command<{ best: boolean }, Empty>('CaptureFinger', {
    retryable: true,
    workMs: WORK_MS.capture,
    encodeRequest: ({ best }) => (best ? 1 : 0),
    decodeRequest: (p) => ({ best: p !== 0 }),
    ...ackOnly,
  }),
  MakeTemplate: command<Empty, { data: Buffer }>('MakeTemplate', {
    retryable: true,
    workMs: WORK_MS.enroll,
    ...noParameter,
    ...bulk('MakeTemplate', TEMPLATE_SIZE),
  }),
  /** The last captured image: 258 × 202, 8 bits a pixel. */
  GetImage: command<Empty, { data: Buffer }>('GetImage', { retryable: true, ...noParameter, ...bulk('GetImage', IMAGE_SIZE) }),
  /** A live 160 × 120 preview (no capture needed). */
  GetRawImage: command<Empty, { data: Buffer }>('GetRawImage', {
    retryable: true,
    workMs: WORK_MS.capture,
    ...noParameter,
    ...bulk('GetRawImage', RAW_IMAGE_SIZE),
  }),
  GetTemplate: command<{ slot: number }, { data: Buffer }>('GetTemplate', {
    retryable: true,
    ...slotParameter,
    ...bulk('GetTemplate', TEMPLATE_SIZE),
  }),
  /** Writes the uploaded template into `slot`, checking for duplicates unless told not to. */
  SetTemplate: command<{ slot: number; checkDuplicate: boolean }, Empty>('SetTemplate', {
    retryable: false,
    hostData: TEMPLATE_SIZE,
    encodeRequest: ({ slot, checkDuplicate }) => (slot | (checkDuplicate ? 0 : SET_TEMPLATE_NO_DUP_CHECK)) >>> 0,
    decodeRequest: (p) => ({ slot: p & 0xffff, checkDuplicate: !(p & SET_TEMPLATE_NO_DUP_CHECK) }),
    ...ackOnly,
  }),
} as const;

export type Gt521CodecName = keyof typeof Gt521;
type AnyCodec = Gt521CommandCodec<never, unknown>;

/** The codec of a command code (what the simulator looks up for each packet). */
export const GT521_COMMANDS: ReadonlyMap<number, AnyCodec> = new Map(Object.values(Gt521).map((c) => [c.code, c as AnyCodec]));
