/**
 * GT-521 frame codec: typed packets to bytes and back. The stream parser (parser.ts) finds the
 * frames in a byte stream; this file only knows one frame at a time.
 */
import { AgentError } from '../../src/core/errors.js';
import { CMD_START, DATA_OVERHEAD, DATA_START, DEFAULT_DEVICE_ID, PACKET_SIZE } from './protocol.js';

/** A command (host → module) or response (module → host) packet. */
export interface Gt521Packet {
  deviceId: number;
  /** u32: the command's input or the response's output (the error code in a NACK). */
  parameter: number;
  /** Command code, or ACK (0x30) / NACK (0x31) in a response. */
  code: number;
}

export interface Gt521DataPacket {
  deviceId: number;
  data: Buffer;
}

/** 16-bit sum of `bytes[start..end)`. */
export function checksum16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum += bytes[i]!;
  return sum & 0xffff;
}

export function encodePacket(packet: { parameter?: number; code: number; deviceId?: number }): Buffer {
  const buf = Buffer.alloc(PACKET_SIZE);
  buf[0] = CMD_START[0];
  buf[1] = CMD_START[1];
  buf.writeUInt16LE(packet.deviceId ?? DEFAULT_DEVICE_ID, 2);
  buf.writeUInt32LE((packet.parameter ?? 0) >>> 0, 4);
  buf.writeUInt16LE(packet.code, 8);
  buf.writeUInt16LE(checksum16(buf, 0, 10), 10);
  return buf;
}

export function encodeData(data: Uint8Array, deviceId = DEFAULT_DEVICE_ID): Buffer {
  const buf = Buffer.alloc(data.length + DATA_OVERHEAD);
  buf[0] = DATA_START[0];
  buf[1] = DATA_START[1];
  buf.writeUInt16LE(deviceId, 2);
  buf.set(data, 4);
  buf.writeUInt16LE(checksum16(buf, 0, buf.length - 2), buf.length - 2);
  return buf;
}

function checksumError(kind: string, bytes: Uint8Array, expected: number, got: number): AgentError {
  return new AgentError(
    'DRIVER_CHECKSUM',
    `GT-521 ${kind} packet with a bad checksum (expected 0x${expected.toString(16)}, got 0x${got.toString(16)})`,
    { family: 'gt521', kind, length: bytes.length, expected, got },
    { hint: 'Noise on the serial line or a wrong baud rate; check the cable and the baud setting.', retryable: true },
  );
}

/** Decodes one whole 12-byte packet, checking start code and checksum. */
export function decodePacket(bytes: Uint8Array): Gt521Packet {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length !== PACKET_SIZE || buf[0] !== CMD_START[0] || buf[1] !== CMD_START[1]) {
    throw new AgentError(
      'DRIVER_FRAME',
      `not a GT-521 command/response packet (${buf.length} bytes)`,
      { family: 'gt521', length: buf.length },
      { hint: 'Check the device family and the baud rate.' },
    );
  }
  const expected = checksum16(buf, 0, 10);
  const got = buf.readUInt16LE(10);
  if (expected !== got) throw checksumError('response', buf, expected, got);
  return { deviceId: buf.readUInt16LE(2), parameter: buf.readUInt32LE(4), code: buf.readUInt16LE(8) };
}

/** Decodes one whole data packet (payload length = bytes.length - 6), checking its checksum. */
export function decodeData(bytes: Uint8Array): Gt521DataPacket {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < DATA_OVERHEAD || buf[0] !== DATA_START[0] || buf[1] !== DATA_START[1]) {
    throw new AgentError(
      'DRIVER_FRAME',
      `not a GT-521 data packet (${buf.length} bytes)`,
      { family: 'gt521', length: buf.length },
      { hint: 'Check the device family and the baud rate.' },
    );
  }
  const expected = checksum16(buf, 0, buf.length - 2);
  const got = buf.readUInt16LE(buf.length - 2);
  if (expected !== got) throw checksumError('data', buf, expected, got);
  return { deviceId: buf.readUInt16LE(2), data: Buffer.from(buf.subarray(4, buf.length - 2)) };
}
