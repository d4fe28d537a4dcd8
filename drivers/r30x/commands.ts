/**
 * One codec per R30x command, used by both ends of the wire: the driver encodes the request and
 * decodes the response, the simulator decodes the request and encodes the response, so no
 * command's bytes are written twice. (In the spirit of zwave-js's message classes with
 * `serialize()` and `from(raw)`, registered by function type; here one object per instruction,
 * found by its code with `R30X_COMMANDS`.)
 *
 * A request is the instruction's parameter bytes (after the instruction code); a response the
 * acknowledgement's bytes after the confirmation code. Commands that move data packets after the
 * acknowledgement say which way (`data`).
 */
import { AgentError } from '../../src/core/errors.js';
import { CHAR_FILE_BYTES, IMAGE_BYTES, Instruction, PACKET_SIZES, type InstructionName } from './protocol.js';

export interface R30xCommand<Req, Res> {
  readonly name: InstructionName;
  readonly instruction: number;
  /** Data packets after the acknowledgement: `in` module → host (with their usual size), `out` host → module. */
  readonly data?: { direction: 'in'; bytes: number } | { direction: 'out' };
  encodeRequest(req: Req): Uint8Array;
  /** Null when the parameters are too short (the module answers 0x01, packet receive error). */
  decodeRequest(params: Buffer): Req | null;
  encodeResponse(res: Res, req: Req): Uint8Array;
  /** Throws DRIVER_PROTOCOL when the answer is too short to be this command's. */
  decodeResponse(params: Buffer, req: Req): Res;
}

export interface SystemParameters {
  status: number;
  systemId: number;
  capacity: number;
  securityLevel: number;
  address: number;
  packetSize: number;
  baud: number;
}

export interface ProductInfo {
  model: string;
  batch: string;
  serial: string;
  hardwareVersion: string;
  sensor: string;
  sensorWidth: number;
  sensorHeight: number;
  templateSize: number;
  capacity: number;
}

export interface SearchHit {
  slot: number;
  score: number;
}

export type CharBuffer = 1 | 2;

type Empty = Record<string, never>;
const EMPTY = new Uint8Array(0);
const none = { encode: (): Uint8Array => EMPTY, decode: (): Empty => ({}) };

export function protocolError(op: string, detail: string): AgentError {
  return new AgentError(
    'DRIVER_PROTOCOL',
    `unexpected R30x answer to ${op}: ${detail}`,
    { op },
    { hint: 'the device on this port may not be an R30x module; run "edge-agent devices" to identify it', retryable: true },
  );
}

function u16(n: number): [number, number] {
  return [(n >> 8) & 0xff, n & 0xff];
}

function ascii(b: Uint8Array): string {
  return Buffer.from(b).toString('latin1').replace(/\0+$/, '').trim();
}

function field(text: string, length: number): Buffer {
  const b = Buffer.alloc(length);
  b.write(text.slice(0, length), 0, length, 'latin1');
  return b;
}

function command<Req, Res>(name: InstructionName, codec: Omit<R30xCommand<Req, Res>, 'name' | 'instruction'>): R30xCommand<Req, Res> {
  return { name, instruction: Instruction[name], ...codec };
}

/** A command with no parameters and an empty acknowledgement. */
function bare(name: InstructionName, data?: R30xCommand<Empty, Empty>['data']): R30xCommand<Empty, Empty> {
  return command(name, {
    ...(data ? { data } : {}),
    encodeRequest: none.encode,
    decodeRequest: none.decode,
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  });
}

/** A command whose only parameter is a character buffer (1 or 2). */
function onBuffer(name: InstructionName, data?: R30xCommand<{ buffer: number }, Empty>['data']): R30xCommand<{ buffer: number }, Empty> {
  return command(name, {
    ...(data ? { data } : {}),
    encodeRequest: ({ buffer }) => Uint8Array.of(buffer),
    decodeRequest: (p) => (p.length < 1 ? null : { buffer: p[0]! }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  });
}

/** A command on a character buffer and a library slot. */
function onSlot(name: InstructionName): R30xCommand<{ buffer: number; slot: number }, Empty> {
  return command(name, {
    encodeRequest: ({ buffer, slot }) => Uint8Array.of(buffer, ...u16(slot)),
    decodeRequest: (p) => (p.length < 3 ? null : { buffer: p[0]!, slot: p.readUInt16BE(1) }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  });
}

function search(name: 'Search' | 'HiSpeedSearch'): R30xCommand<{ buffer: number; start: number; count: number }, SearchHit> {
  return command(name, {
    encodeRequest: ({ buffer, start, count }) => Uint8Array.of(buffer, ...u16(start), ...u16(count)),
    decodeRequest: (p) => (p.length < 5 ? null : { buffer: p[0]!, start: p.readUInt16BE(1), count: p.readUInt16BE(3) }),
    encodeResponse: ({ slot, score }) => Uint8Array.of(...u16(slot), ...u16(score)),
    decodeResponse: (p) => {
      if (p.length < 4) throw protocolError(name, 'short search answer');
      return { slot: p.readUInt16BE(0), score: p.readUInt16BE(2) };
    },
  });
}

export const R30x = {
  VfyPwd: command<{ password: number }, Empty>('VfyPwd', {
    encodeRequest: ({ password }) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(password >>> 0);
      return b;
    },
    decodeRequest: (p) => (p.length < 4 ? null : { password: p.readUInt32BE(0) }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  }),
  ReadSysPara: command<Empty, SystemParameters>('ReadSysPara', {
    encodeRequest: none.encode,
    decodeRequest: none.decode,
    encodeResponse: (r) => {
      const b = Buffer.alloc(16);
      b.writeUInt16BE(r.status, 0);
      b.writeUInt16BE(r.systemId, 2);
      b.writeUInt16BE(r.capacity, 4);
      b.writeUInt16BE(r.securityLevel, 6);
      b.writeUInt32BE(r.address >>> 0, 8);
      b.writeUInt16BE((PACKET_SIZES as readonly number[]).indexOf(r.packetSize), 12);
      b.writeUInt16BE(r.baud / 9600, 14);
      return b;
    },
    decodeResponse: (p) => {
      if (p.length < 16) throw protocolError('ReadSysPara', `expected 16 parameter bytes, got ${p.length}`);
      return {
        status: p.readUInt16BE(0),
        systemId: p.readUInt16BE(2),
        capacity: p.readUInt16BE(4),
        securityLevel: p.readUInt16BE(6),
        address: p.readUInt32BE(8),
        packetSize: PACKET_SIZES[p.readUInt16BE(12)] ?? 128,
        baud: p.readUInt16BE(14) * 9600,
      };
    },
  }),
  ReadProdInfo: command<Empty, ProductInfo>('ReadProdInfo', {
    encodeRequest: none.encode,
    decodeRequest: none.decode,
    encodeResponse: (r) => {
      const [major, minor] = r.hardwareVersion.split('.').map(Number);
      const tail = Buffer.alloc(8);
      tail.writeUInt16BE(r.sensorWidth, 0);
      tail.writeUInt16BE(r.sensorHeight, 2);
      tail.writeUInt16BE(r.templateSize, 4);
      tail.writeUInt16BE(r.capacity, 6);
      return Buffer.concat([
        field(r.model, 16),
        field(r.batch, 4),
        field(r.serial, 8),
        Uint8Array.of(major ?? 0, minor ?? 0),
        field(r.sensor, 8),
        tail,
      ]);
    },
    decodeResponse: (p) => {
      if (p.length < 46) throw protocolError('ReadProdInfo', `expected 46 bytes, got ${p.length}`);
      return {
        model: ascii(p.subarray(0, 16)),
        batch: ascii(p.subarray(16, 20)),
        serial: ascii(p.subarray(20, 28)),
        hardwareVersion: `${p[28]}.${p[29]}`,
        sensor: ascii(p.subarray(30, 38)),
        sensorWidth: p.readUInt16BE(38),
        sensorHeight: p.readUInt16BE(40),
        templateSize: p.readUInt16BE(42),
        capacity: p.readUInt16BE(44),
      };
    },
  }),
  WriteReg: command<{ register: number; value: number }, Empty>('WriteReg', {
    encodeRequest: ({ register, value }) => Uint8Array.of(register, value),
    decodeRequest: (p) => (p.length < 2 ? null : { register: p[0]!, value: p[1]! }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  }),
  GenImg: bare('GenImg'),
  Img2Tz: onBuffer('Img2Tz'),
  RegModel: bare('RegModel'),
  Store: onSlot('Store'),
  LoadChar: onSlot('LoadChar'),
  UpChar: onBuffer('UpChar', { direction: 'in', bytes: CHAR_FILE_BYTES }),
  DownChar: onBuffer('DownChar', { direction: 'out' }),
  UpImage: bare('UpImage', { direction: 'in', bytes: IMAGE_BYTES }),
  Search: search('Search'),
  HiSpeedSearch: search('HiSpeedSearch'),
  Match: command<Empty, { score: number }>('Match', {
    encodeRequest: none.encode,
    decodeRequest: none.decode,
    encodeResponse: ({ score }) => Uint8Array.of(...u16(score)),
    decodeResponse: (p) => ({ score: p.length >= 2 ? p.readUInt16BE(0) : 0 }),
  }),
  DeletChar: command<{ slot: number; count: number }, Empty>('DeletChar', {
    encodeRequest: ({ slot, count }) => Uint8Array.of(...u16(slot), ...u16(count)),
    decodeRequest: (p) => (p.length < 4 ? null : { slot: p.readUInt16BE(0), count: p.readUInt16BE(2) }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  }),
  Empty: bare('Empty'),
  TemplateNum: command<Empty, { count: number }>('TemplateNum', {
    encodeRequest: none.encode,
    decodeRequest: none.decode,
    encodeResponse: ({ count }) => Uint8Array.of(...u16(count)),
    decodeResponse: (p) => {
      if (p.length < 2) throw protocolError('TemplateNum', 'short answer');
      return { count: p.readUInt16BE(0) };
    },
  }),
  /** The used slots of index page `page` (slots page×256 .. page×256+255), as a 32-byte bitmap. */
  ReadIndexTable: command<{ page: number }, { slots: number[] }>('ReadIndexTable', {
    encodeRequest: ({ page }) => Uint8Array.of(page),
    decodeRequest: (p) => ({ page: p[0] ?? 0 }),
    encodeResponse: ({ slots }, { page }) => {
      const b = Buffer.alloc(32);
      for (const slot of slots) {
        const rel = slot - page * 256;
        if (rel >= 0 && rel < 256) b[rel >> 3]! |= 1 << (rel & 7);
      }
      return b;
    },
    decodeResponse: (p, { page }) => {
      const slots: number[] = [];
      for (let i = 0; i < Math.min(32, p.length); i++) {
        for (let bit = 0; bit < 8; bit++) if (p[i]! & (1 << bit)) slots.push(page * 256 + i * 8 + bit);
      }
      return { slots };
    },
  }),
  /** R503 ring LED: control (LedControl), speed 0..255, colour (LedColor), count (0 = forever). */
  AuraLedConfig: command<{ control: number; speed: number; color: number; count: number }, Empty>('AuraLedConfig', {
    encodeRequest: ({ control, speed, color, count }) => Uint8Array.of(control, speed, color, count),
    decodeRequest: (p) => (p.length < 4 ? null : { control: p[0]!, speed: p[1]!, color: p[2]!, count: p[3]! }),
    encodeResponse: none.encode,
    decodeResponse: none.decode,
  }),
} as const;

// Every codec under the name of its instruction.
export type R30xCommandName = keyof typeof R30x;
type AnyCommand = R30xCommand<never, unknown>;

/** The codec of an instruction code (what the simulator looks up for each packet). */
export const R30X_COMMANDS: ReadonlyMap<number, AnyCommand> = new Map(Object.values(R30x).map((c) => [c.instruction, c as AnyCommand]));
