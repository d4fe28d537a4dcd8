/**
 * R30x / ZFM / AS608 packet codec.
 *
 *   EF 01 | address (4, BE) | packet id (1) | length (2, BE) | payload (length - 2) | checksum (2, BE)
 *
 * `length` counts the payload plus the 2 checksum bytes. The checksum is the low 16 bits of the sum
 * of the packet id, both length bytes and every payload byte. Packet ids: 0x01 command, 0x02 data
 * (more follows), 0x07 acknowledge, 0x08 end of data.
 */
import { AgentError } from '../../src/core/errors.js';

export const START_CODE = 0xef01;
export const DEFAULT_ADDRESS = 0xffffffff;
export const HEADER_LENGTH = 9;

export const PacketId = {
  command: 0x01,
  data: 0x02,
  ack: 0x07,
  end: 0x08,
} as const;
export type PacketIdValue = (typeof PacketId)[keyof typeof PacketId];

export const PACKET_IDS: ReadonlySet<number> = new Set(Object.values(PacketId));
/** Largest payload the codec accepts (256-byte data packets plus room for long acks). */
export const MAX_PAYLOAD = 512;

export interface R30xPacket {
  address: number;
  pid: number;
  payload: Buffer;
}

export function checksum(pid: number, payload: Uint8Array): number {
  const length = payload.length + 2;
  let sum = pid + (length >> 8) + (length & 0xff);
  for (const b of payload) sum += b;
  return sum & 0xffff;
}

export function encodePacket(packet: { address?: number; pid: number; payload: Uint8Array }): Buffer {
  const { pid, payload } = packet;
  const address = packet.address ?? DEFAULT_ADDRESS;
  if (payload.length > MAX_PAYLOAD) {
    throw new AgentError('DRIVER_PROTOCOL', `an R30x packet carries at most ${MAX_PAYLOAD} bytes, got ${payload.length}`, {
      length: payload.length,
    });
  }
  const out = Buffer.alloc(HEADER_LENGTH + payload.length + 2);
  out.writeUInt16BE(START_CODE, 0);
  out.writeUInt32BE(address >>> 0, 2);
  out.writeUInt8(pid, 6);
  out.writeUInt16BE(payload.length + 2, 7);
  out.set(payload, HEADER_LENGTH);
  out.writeUInt16BE(checksum(pid, payload), HEADER_LENGTH + payload.length);
  return out;
}

export function encodeCommand(instruction: number, params: Uint8Array = new Uint8Array(0), address?: number): Buffer {
  const payload = Buffer.alloc(1 + params.length);
  payload[0] = instruction;
  payload.set(params, 1);
  return encodePacket({ address, pid: PacketId.command, payload });
}

/** An acknowledgement: the confirmation code, then the command's answer bytes. */
export function encodeAck(code: number, params: Uint8Array = new Uint8Array(0), address?: number): Buffer {
  const payload = Buffer.alloc(1 + params.length);
  payload[0] = code;
  payload.set(params, 1);
  return encodePacket({ address, pid: PacketId.ack, payload });
}

/** An acknowledgement's confirmation code and answer bytes; null when it has no code. */
export function decodeAck(packet: R30xPacket): { code: number; params: Buffer } | null {
  if (packet.payload.length < 1) return null;
  return { code: packet.payload[0]!, params: packet.payload.subarray(1) };
}

/** `data` as data packets of `packetSize` bytes, the last one an end-of-data packet. */
export function splitDataPackets(data: Uint8Array, packetSize: number, address?: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let off = 0; off < data.length || off === 0; off += packetSize) {
    const chunk = data.subarray(off, Math.min(off + packetSize, data.length));
    const last = off + packetSize >= data.length;
    parts.push(encodePacket({ address, pid: last ? PacketId.end : PacketId.data, payload: chunk }));
    if (last) break;
  }
  return parts;
}

/** `data` as data packets in one piece (what a host writes after DownChar's acknowledgement). */
export function encodeDataPackets(data: Uint8Array, packetSize: number, address?: number): Buffer {
  return Buffer.concat(splitDataPackets(data, packetSize, address));
}

/** Bytes on the wire for `payloadBytes` sent as data packets of `packetSize`. */
export function dataPacketsWireBytes(payloadBytes: number, packetSize: number): number {
  const packets = Math.max(1, Math.ceil(payloadBytes / packetSize));
  return payloadBytes + packets * (HEADER_LENGTH + 2);
}

/** 4-bit image bytes (left pixel in the high nibble) to 8-bit pixels (×17). */
export function unpackNibbles(bytes: Uint8Array, pixelCount: number): Uint8Array {
  const pixels = new Uint8Array(pixelCount);
  for (let i = 0; i < pixelCount; i++) {
    const b = bytes[i >> 1] ?? 0;
    pixels[i] = ((i & 1) === 0 ? b >> 4 : b & 0x0f) * 17;
  }
  return pixels;
}

/** 8-bit pixels to 4-bit image bytes: the upper 4 bits of each pixel, as the module sends them. */
export function packNibbles(pixels: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(pixels.length / 2));
  for (let i = 0; i < pixels.length; i++) {
    out[i >> 1]! |= (i & 1) === 0 ? pixels[i]! & 0xf0 : pixels[i]! >> 4;
  }
  return out;
}
