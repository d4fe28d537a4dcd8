/**
 * The generic HID iris module protocol, version 1 (defined here; PROTOCOL.md documents it byte by
 * byte). All reports are 64 bytes with a report id in byte 0; multi-byte fields little-endian.
 *
 * - Output report 0x01 COMMAND (host → device): START_CAPTURE, STOP_CAPTURE, RESEND_RESULT.
 * - Feature report 0x02 DEVICE_INFO (get): model, firmware, serial, sensor size, resolution.
 * - Feature report 0x03 LIGHTS (set and get): IR illuminator level, indicator LED colour and mode.
 * - Feature report 0x04 STATUS (get): state, eye in view, last error.
 * - Input report 0x10 (device → host), byte 1 says what it carries: 0x01 REPLY to a command, or
 *   0x02 RESULT_CHUNK: 59 bytes of the result message with a sequence number.
 *
 * A result message is a 32-byte header, the pixels and a CRC-32 over both, cut into chunks.
 */
import { crc32 } from 'node:zlib';
import { AgentError } from '../../src/core/errors.js';

export const REPORT_SIZE = 64;

export const ReportId = {
  Command: 0x01,
  DeviceInfo: 0x02,
  Lights: 0x03,
  Status: 0x04,
  Input: 0x10,
} as const;

export const InputType = { Reply: 0x01, ResultChunk: 0x02 } as const;

export const IrisCommand = { StartCapture: 0x10, StopCapture: 0x11, ResendResult: 0x12 } as const;

export const IrisStatus = {
  Ok: 0x00,
  Busy: 0x01,
  NoEye: 0x02,
  LowQuality: 0x03,
  BadParam: 0x04,
  UnknownCommand: 0x05,
  NoResult: 0x06,
  Cancelled: 0x07,
  HardwareError: 0x08,
} as const;

export interface IrisStatusInfo {
  name: string;
  message: string;
  hint: string;
  retryable: boolean;
}

export const IRIS_STATUS: Readonly<Record<number, IrisStatusInfo>> = {
  0x01: {
    name: 'BUSY',
    message: 'the camera is already capturing',
    hint: 'Stop the running capture first or wait for its result.',
    retryable: true,
  },
  0x02: {
    name: 'NO_EYE',
    message: 'no eye came into view before the capture timeout',
    hint: 'Ask the person to look into the camera at 25-35 cm.',
    retryable: true,
  },
  0x03: {
    name: 'LOW_QUALITY',
    message: 'the eye image is below the requested quality',
    hint: 'Ask the person to open the eye wide, hold still and remove glasses.',
    retryable: true,
  },
  0x04: {
    name: 'BAD_PARAM',
    message: 'the camera refused a command parameter',
    hint: 'Check the image kind and size: 640×480 (kinds 2, 3, 7) or 320×240 (kinds 3, 7).',
    retryable: false,
  },
  0x05: {
    name: 'UNKNOWN_COMMAND',
    message: 'the camera does not know the command',
    hint: 'Check the camera firmware speaks protocol version 1.',
    retryable: false,
  },
  0x06: { name: 'NO_RESULT', message: 'the camera holds no result to resend', hint: 'Start a new capture.', retryable: false },
  0x07: { name: 'CANCELLED', message: 'the capture was stopped', hint: 'Start a new capture.', retryable: true },
  0x08: {
    name: 'HARDWARE_ERROR',
    message: 'the camera reported a hardware fault',
    hint: 'Unplug and replug the camera; replace it if it persists.',
    retryable: false,
  },
};

/** Image kinds, numbered like the image types of ISO/IEC 19794-6:2011. */
export const IrisImageKind = {
  /** The whole 640×480 sensor frame. */
  Vga: 2,
  /** Cropped: iris centred, 0.6 R margins left and right, 0.2 R above and below (4:3). */
  Cropped: 3,
  /** Cropped and masked: as Cropped, with everything outside the iris set to 128. */
  CroppedMasked: 7,
} as const;

export const ALLOWED_KINDS: ReadonlyArray<{ kind: number; width: number; height: number }> = [
  { kind: IrisImageKind.Vga, width: 640, height: 480 },
  { kind: IrisImageKind.Cropped, width: 640, height: 480 },
  { kind: IrisImageKind.Cropped, width: 320, height: 240 },
  { kind: IrisImageKind.CroppedMasked, width: 640, height: 480 },
  { kind: IrisImageKind.CroppedMasked, width: 320, height: 240 },
];

export const CHUNK_PAYLOAD = 59;
export const CHUNK_FLAG_FIRST = 0x01;
export const CHUNK_FLAG_LAST = 0x02;
export const RESULT_HEADER_SIZE = 32;
export const RESULT_MAGIC = 'IRIS';
/** The largest image the protocol allows (640×480, ALLOWED_KINDS): no result carries more pixels. */
export const MAX_RESULT_PIXELS = Math.max(...ALLOWED_KINDS.map((k) => k.width * k.height));
export const PROTOCOL_VERSION = 1;
/** Masked pixels of a cropped-and-masked image. */
export const MASK_VALUE = 128;

export interface IrisDeviceInfo {
  protocolVersion: number;
  model: string;
  firmware: string;
  serial: string;
  sensorWidth: number;
  sensorHeight: number;
  /** Pixels per inch at the nominal capture distance. */
  ppi: number;
  /** Bit 0: IR illuminator; bit 1: indicator LED. */
  capabilities: number;
}

export interface IrisLights {
  /** IR illuminator drive 0..255 (0 = off). */
  ir: number;
  /** Indicator LED: 0 off, 1 green, 2 red, 3 amber. */
  color: number;
  /** 0 steady, 1 blinking. */
  blink: number;
}

export interface IrisStatusReport {
  /** 0 idle, 1 capturing, 2 sending a result. */
  state: number;
  eyeInView: boolean;
  lastError: number;
}

export interface CaptureRequest {
  kind: number;
  width: number;
  height: number;
  /** How long the camera waits for an eye (ms, 1..65535). */
  timeoutMs: number;
  /** Refuse results under this quality (0..100). */
  minQuality: number;
}

export interface IrisResult {
  tag: number;
  kind: number;
  quality: number;
  width: number;
  height: number;
  pupilX: number;
  pupilY: number;
  irisRadius: number;
  flags: number;
  captureMs: number;
  pixels: Uint8Array;
}

function ascii(buf: Buffer, offset: number, length: number): string {
  return buf
    .subarray(offset, offset + length)
    .toString('latin1')
    .replace(/\0+$/, '');
}

function report(id: number): Buffer {
  const b = Buffer.alloc(REPORT_SIZE);
  b[0] = id;
  return b;
}

// ------------------------------------------------------------------ feature reports

export function encodeDeviceInfo(info: IrisDeviceInfo): Buffer {
  const b = report(ReportId.DeviceInfo);
  b[1] = info.protocolVersion;
  b.write(info.model.slice(0, 16), 2, 16, 'latin1');
  b.write(info.firmware.slice(0, 8), 18, 8, 'latin1');
  b.write(info.serial.slice(0, 16), 26, 16, 'latin1');
  b.writeUInt16LE(info.sensorWidth, 42);
  b.writeUInt16LE(info.sensorHeight, 44);
  b.writeUInt16LE(info.ppi, 46);
  b[48] = info.capabilities;
  return b;
}

export function decodeDeviceInfo(b: Buffer): IrisDeviceInfo {
  if (b.length < 49 || b[0] !== ReportId.DeviceInfo) throw badReport('DEVICE_INFO', b);
  return {
    protocolVersion: b[1]!,
    model: ascii(b, 2, 16),
    firmware: ascii(b, 18, 8),
    serial: ascii(b, 26, 16),
    sensorWidth: b.readUInt16LE(42),
    sensorHeight: b.readUInt16LE(44),
    ppi: b.readUInt16LE(46),
    capabilities: b[48]!,
  };
}

export function encodeLights(l: IrisLights): Buffer {
  const b = report(ReportId.Lights);
  b[1] = l.ir;
  b[2] = l.color;
  b[3] = l.blink;
  return b;
}

export function decodeLights(b: Buffer): IrisLights {
  if (b.length < 4 || b[0] !== ReportId.Lights) throw badReport('LIGHTS', b);
  return { ir: b[1]!, color: b[2]!, blink: b[3]! };
}

export function encodeStatus(s: IrisStatusReport): Buffer {
  const b = report(ReportId.Status);
  b[1] = s.state;
  b[2] = s.eyeInView ? 1 : 0;
  b[3] = s.lastError;
  return b;
}

export function decodeStatus(b: Buffer): IrisStatusReport {
  if (b.length < 4 || b[0] !== ReportId.Status) throw badReport('STATUS', b);
  return { state: b[1]!, eyeInView: b[2] === 1, lastError: b[3]! };
}

// ------------------------------------------------------------------ commands and replies

export interface IrisCommandReport {
  command: number;
  tag: number;
  params: Buffer;
}

export function encodeCommand(command: number, tag: number, params: Uint8Array = Buffer.alloc(0)): Buffer {
  const b = report(ReportId.Command);
  b[1] = command;
  b[2] = tag & 0xff;
  b[3] = params.length;
  Buffer.from(params).copy(b, 4);
  return b;
}

export function decodeCommand(b: Buffer): IrisCommandReport {
  if (b.length < 4 || b[0] !== ReportId.Command || b[3]! > REPORT_SIZE - 4) throw badReport('COMMAND', b);
  return { command: b[1]!, tag: b[2]!, params: Buffer.from(b.subarray(4, 4 + b[3]!)) };
}

export function encodeCaptureParams(r: CaptureRequest): Buffer {
  const p = Buffer.alloc(8);
  p[0] = r.kind;
  p.writeUInt16LE(r.width, 1);
  p.writeUInt16LE(r.height, 3);
  p.writeUInt16LE(Math.max(1, Math.min(0xffff, Math.round(r.timeoutMs))), 5);
  p[7] = r.minQuality;
  return p;
}

export function decodeCaptureParams(p: Buffer): CaptureRequest | null {
  if (p.length < 8) return null;
  return { kind: p[0]!, width: p.readUInt16LE(1), height: p.readUInt16LE(3), timeoutMs: p.readUInt16LE(5), minQuality: p[7]! };
}

export interface IrisReply {
  command: number;
  tag: number;
  status: number;
  detail: Buffer;
}

/** An input report 0x10 of type REPLY. */
export function encodeReply(r: IrisReply): Buffer {
  const b = report(ReportId.Input);
  b[1] = InputType.Reply;
  b[2] = r.command;
  b[3] = r.tag;
  b[4] = r.status;
  b[5] = r.detail.length;
  r.detail.copy(b, 6);
  return b;
}

/** Decodes an input report WITHOUT its id byte (as the transport delivers it). */
export function decodeReply(body: Buffer): IrisReply {
  if (body.length < 5) throw badReport('REPLY', body);
  return { command: body[1]!, tag: body[2]!, status: body[3]!, detail: Buffer.from(body.subarray(5, 5 + body[4]!)) };
}

export interface IrisChunk {
  seq: number;
  flags: number;
  payload: Buffer;
}

/** An input report 0x10 of type RESULT_CHUNK. */
export function encodeChunk(seq: number, flags: number, payload: Uint8Array): Buffer {
  const b = report(ReportId.Input);
  writeChunkHeader(b, 0, seq, flags);
  b.set(payload.subarray(0, CHUNK_PAYLOAD), 5);
  return b;
}

/** The first 5 bytes of a RESULT_CHUNK report, at `at` of `b`. */
function writeChunkHeader(b: Buffer, at: number, seq: number, flags: number): void {
  b[at] = ReportId.Input;
  b[at + 1] = InputType.ResultChunk;
  b.writeUInt16LE(seq & 0xffff, at + 2);
  b[at + 4] = flags;
}

/** Where the payload starts in a chunk WITHOUT its report id byte (type, seq, flags before it). */
const CHUNK_PAYLOAD_AT = 4;

/** Decodes a chunk WITHOUT its report id byte (as the transport delivers it). */
export function decodeChunk(body: Buffer): IrisChunk {
  if (body.length < 5) throw badReport('RESULT_CHUNK', body);
  return { seq: chunkSeq(body), flags: chunkFlags(body), payload: body.subarray(CHUNK_PAYLOAD_AT, CHUNK_PAYLOAD_AT + CHUNK_PAYLOAD) };
}

// A receiver reassembling a result reads each of its ~5,200 chunks in place with these three
// instead of decodeChunk (no object and no payload Buffer a chunk): the same fields, for a body known
// to be at least 5 bytes long.

/** The sequence number of a chunk body (WITHOUT its report id byte). */
export function chunkSeq(body: Uint8Array): number {
  return body[1]! | (body[2]! << 8);
}

/** The flags of a chunk body (WITHOUT its report id byte). */
export function chunkFlags(body: Uint8Array): number {
  return body[3]!;
}

/**
 * Copies a chunk body's payload (what decodeChunk's `payload` holds: up to CHUNK_PAYLOAD bytes,
 * fewer if the report is short) into `target` at `offset`, which must have room for
 * CHUNK_PAYLOAD bytes. Returns the bytes copied.
 */
export function copyChunkPayload(body: Buffer, target: Uint8Array, offset: number): number {
  return body.copy(target, offset, CHUNK_PAYLOAD_AT, CHUNK_PAYLOAD_AT + CHUNK_PAYLOAD);
}

// ------------------------------------------------------------------ result message

export function resultLength(pixelBytes: number): number {
  return RESULT_HEADER_SIZE + pixelBytes + 4;
}

export function encodeResult(r: IrisResult): Buffer {
  const n = r.pixels.length;
  const b = Buffer.alloc(resultLength(n));
  b.write(RESULT_MAGIC, 0, 4, 'latin1');
  b[4] = PROTOCOL_VERSION;
  b[5] = r.tag & 0xff;
  b[6] = r.kind;
  b[7] = r.quality;
  b.writeUInt16LE(r.width, 8);
  b.writeUInt16LE(r.height, 10);
  b.writeUInt16LE(r.pupilX, 12);
  b.writeUInt16LE(r.pupilY, 14);
  b.writeUInt16LE(r.irisRadius, 16);
  b[18] = r.flags;
  b.writeUInt32LE(r.captureMs >>> 0, 20);
  b.writeUInt32LE(n, 24);
  Buffer.from(r.pixels.buffer, r.pixels.byteOffset, n).copy(b, RESULT_HEADER_SIZE);
  b.writeUInt32LE(crc32(b.subarray(0, RESULT_HEADER_SIZE + n)), RESULT_HEADER_SIZE + n);
  return b;
}

export interface IrisResultHeader {
  tag: number;
  kind: number;
  width: number;
  height: number;
  /** Pixel byte count N (= width × height, at most MAX_RESULT_PIXELS). */
  pixelBytes: number;
  /** Whole message length: header, pixels, CRC-32. */
  total: number;
}

/**
 * The header of a result message: null if the bytes do not start one (no `IRIS` magic), a
 * `DRIVER_FRAME` AgentError if its sizes are outside what the protocol allows (a pixel count over
 * 640×480, or not width × height), so a receiver never sizes a buffer from an unchecked length.
 */
export function readResultHeader(head: Buffer): IrisResultHeader | null {
  if (head.length < RESULT_HEADER_SIZE || head.toString('latin1', 0, 4) !== RESULT_MAGIC) return null;
  const pixelBytes = head.readUInt32LE(24);
  const width = head.readUInt16LE(8);
  const height = head.readUInt16LE(10);
  if (pixelBytes > MAX_RESULT_PIXELS || pixelBytes !== width * height) {
    throw new AgentError(
      'DRIVER_FRAME',
      `iris result header announces ${pixelBytes} pixel bytes for ${width}×${height}; the protocol allows width × height up to ${MAX_RESULT_PIXELS}`,
      { family: 'iris-hid', pixelBytes, width, height },
      { hint: 'The camera sent a result header that is not protocol version 1: check its firmware.' },
    );
  }
  return { tag: head[5]!, kind: head[6]!, width, height, pixelBytes, total: resultLength(pixelBytes) };
}

/** Total message length announced by a header (null if the bytes are not a result header; DRIVER_FRAME beyond the protocol's sizes). */
export function peekResultLength(head: Buffer): number | null {
  return readResultHeader(head)?.total ?? null;
}

/** Decodes a whole result message, checking magic, sizes and CRC-32. */
export function decodeResult(b: Buffer): IrisResult {
  const header = readResultHeader(b);
  if (header === null || b.length < header.total) {
    throw new AgentError(
      'DRIVER_FRAME',
      'iris result message is not a protocol-1 result',
      { family: 'iris-hid', length: b.length },
      { hint: 'Check the camera speaks protocol version 1.' },
    );
  }
  const { pixelBytes: n, width, height } = header;
  const expected = crc32(b.subarray(0, RESULT_HEADER_SIZE + n));
  const got = b.readUInt32LE(RESULT_HEADER_SIZE + n);
  if (expected !== got) {
    throw new AgentError(
      'DRIVER_CHECKSUM',
      `iris result with a bad CRC-32 (expected 0x${expected.toString(16)}, got 0x${got.toString(16)})`,
      { family: 'iris-hid', expected, got },
      { hint: 'USB noise or a failing cable; the result is requested again.', retryable: true },
    );
  }
  return {
    tag: b[5]!,
    kind: b[6]!,
    quality: b[7]!,
    width,
    height,
    pupilX: b.readUInt16LE(12),
    pupilY: b.readUInt16LE(14),
    irisRadius: b.readUInt16LE(16),
    flags: b[18]!,
    captureMs: b.readUInt32LE(20),
    pixels: new Uint8Array(b.subarray(RESULT_HEADER_SIZE, RESULT_HEADER_SIZE + n)),
  };
}

/** Input reports one result of width × height takes. */
export function resultReports(width: number, height: number): number {
  return Math.ceil(resultLength(width * height) / CHUNK_PAYLOAD);
}

/**
 * The link floor of one image transfer: one input report per interrupt interval (1 ms at full
 * speed), in ms.
 */
export function irisTransferFloorMs(width: number, height: number, reportIntervalMs = 1): number {
  return resultReports(width, height) * reportIntervalMs;
}

/**
 * Cuts a result message into chunk reports: 64-byte views of one zeroed block that holds them all,
 * each payload copied straight from the message. A Buffer.alloc(64) a report is kept inside V8's
 * heap, and the receiver's first view of it (HidTransport drops the report id) then moves it out
 * at some 0.5 µs a report; a view of the chunk's slice and then encodeChunk's cost more than the
 * copy too. Nothing writes to the reports once made.
 */
export function chunkResult(message: Buffer): Buffer[] {
  const count = Math.ceil(message.length / CHUNK_PAYLOAD);
  const block = Buffer.alloc(count * REPORT_SIZE);
  const out: Buffer[] = new Array(count);
  for (let seq = 0; seq < count; seq++) {
    const at = seq * REPORT_SIZE;
    writeChunkHeader(block, at, seq, (seq === 0 ? CHUNK_FLAG_FIRST : 0) | (seq === count - 1 ? CHUNK_FLAG_LAST : 0));
    message.copy(block, at + 5, seq * CHUNK_PAYLOAD, (seq + 1) * CHUNK_PAYLOAD);
    out[seq] = block.subarray(at, at + REPORT_SIZE);
  }
  return out;
}

function badReport(what: string, b: Buffer): AgentError {
  return new AgentError(
    'DRIVER_FRAME',
    `malformed iris ${what} report (${b.length} bytes, id ${b[0]})`,
    { family: 'iris-hid', report: what, length: b.length },
    { hint: 'Check that the device is an iris camera speaking protocol version 1.' },
  );
}
