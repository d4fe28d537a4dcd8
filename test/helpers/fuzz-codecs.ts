/**
 * Every parser and decoder that reads bytes from outside, as a fuzz target: the R30x and GT-521
 * stream parsers with their per-command codecs, the iris HID reports and result messages, the iris
 * driver's report listener during a capture, ISO/IEC 19794-2 and ANSI INCITS 378 minutiae records,
 * iris codes, template files, site records (sealed and plain), signed ops requests, and badge
 * readers' lines (serial) and keyboard reports (USB keyboard wedge) through the readers' listeners.
 *
 * A frame is random bytes, a valid frame, or a valid frame with a few mutations (bit flips, bytes
 * set, the interesting values a length field hides behind such as 0x7FFFFFFF and 0xFFFFFFF0, cuts,
 * insertions, deletions, repeats); half of the mutated frames get their checksum or signature made
 * right again (`fixup`), so the mutation reaches what lies behind the check. Feeding a frame may
 * throw an AgentError (a refusal) and nothing else; a decoder keeps at most `maxHeld` bytes between
 * frames. Used by the in-suite properties (test/unit/fuzz.test.ts, a few hundred runs each) and by
 * `npm run bench:fuzz` (1,000,000 frames per codec).
 */
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { isAgentError } from '../../src/core/errors.js';
import { TypedEmitter } from '../../src/core/events.js';
import { SeededRandom } from '../../src/biometrics/image/seeded-random.js';
import { decodeFingerRecord, decodeFingerTemplate, encodeFingerRecord } from '../../src/biometrics/finger/iso19794-2.js';
import { decodeIrisTemplate, encodeIrisTemplate, IRIS_CODE_BYTES } from '../../src/biometrics/iris/iris-code.js';
import { readTemplate } from '../../src/biometrics/template-file.js';
import { openSiteRecord, sealSiteRecord } from '../../src/site-sync/site-crypto.js';
import { parseRecord } from '../../src/site-sync/site-sync.js';
import { parseRequest } from '../../src/ops/commands.js';
import { OpsAuthenticator, signCommand } from '../../src/ops/ops-auth.js';
import { OPS_ARGUMENTS } from '../../src/ops/ops-router.js';
import {
  decodeAck,
  encodeAck,
  encodeDataPackets,
  encodePacket as encodeR30xPacket,
  HEADER_LENGTH,
  MAX_PAYLOAD,
  checksum as r30xChecksum,
} from '../../drivers/r30x/codec.js';
import { R30X_COMMANDS } from '../../drivers/r30x/commands.js';
import { R30xParser } from '../../drivers/r30x/parser.js';
import { checksum16, encodeData as encodeGt521Data, encodePacket as encodeGt521Packet } from '../../drivers/gt521/codec.js';
import { GT521_COMMANDS } from '../../drivers/gt521/commands.js';
import { Gt521NackError } from '../../drivers/gt521/errors.js';
import { Gt521Parser } from '../../drivers/gt521/parser.js';
import { ACK, DEVINFO_SIZE, Gt521Command, NACK, TEMPLATE_SIZE } from '../../drivers/gt521/protocol.js';
import { IRIS_COMMANDS } from '../../drivers/iris-hid/commands.js';
import { IrisHidDriver } from '../../drivers/iris-hid/driver.js';
import {
  chunkResult,
  decodeChunk,
  decodeCommand,
  decodeDeviceInfo,
  decodeLights,
  decodeReply,
  decodeResult,
  decodeStatus,
  encodeCaptureParams,
  encodeCommand,
  encodeDeviceInfo,
  encodeLights,
  encodeReply,
  encodeResult,
  encodeStatus,
  readResultHeader,
  RESULT_HEADER_SIZE,
} from '../../drivers/iris-hid/protocol.js';
import { BADGE_CODECS, BADGE_FORMATS, MAX_FRAME_BYTES } from '../../drivers/badge/formats.js';
import { BadgeHidReader } from '../../drivers/badge/hid-reader.js';
import { typeText } from '../../drivers/badge/keyboard.js';
import { MAX_QUEUED, type BadgeReader } from '../../drivers/badge/reader.js';
import { BadgeSerialReader } from '../../drivers/badge/serial-reader.js';
import { disconnectedError } from '../../drivers/transport/errors.js';
import type { ReportTransport, TransportEvents } from '../../drivers/transport/transport.js';
import { croppedResult, resultBodies } from './iris-result.js';

// ---- what a run looks like -------------------------------------------------------------------

export interface FuzzTarget {
  /** Reads one frame. May throw an AgentError (a refusal), nothing else. May be async. */
  feed(frame: Uint8Array): void | Promise<void>;
  /** Bytes the decoder keeps between frames. */
  held(): number;
  /** Makes a mutated frame's checksum or signature right again. */
  fixup?(frame: Uint8Array): Uint8Array;
  /** Throws what went wrong outside feed (a capture that failed with something not an AgentError). */
  close?(): Promise<void>;
}

export interface FuzzCodec {
  name: string;
  /** Valid frames, the seeds of the mutations. */
  valid: fc.Arbitrary<Uint8Array>;
  /** Longest random frame. */
  maxRandom: number;
  /** Most bytes a decoder may keep between frames. */
  maxHeld: number;
  create(): FuzzTarget;
}

/** One frame fed: null when it was read or refused with an AgentError; what went wrong otherwise. */
export async function feedOne(codec: FuzzCodec, target: FuzzTarget, frame: Uint8Array): Promise<unknown> {
  try {
    const r = target.feed(frame);
    if (r) await r;
  } catch (err) {
    if (!isAgentError(err)) return err;
  }
  const held = target.held();
  if (held > codec.maxHeld) return new Error(`${codec.name} keeps ${held} bytes between frames, more than ${codec.maxHeld}`);
  return null;
}

/** Runs `fn`; an AgentError it throws is a refusal and is swallowed, anything else goes on up. */
function refusing(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!isAgentError(err)) throw err;
  }
}

// ---- mutations -------------------------------------------------------------------------------

export type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'interesting'; at: number; pick: number }
  | { op: 'cut'; at: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'delete'; at: number; n: number }
  | { op: 'repeat'; at: number; n: number };

/** Values length and count fields break on, written 1, 2 or 4 bytes wide, little- or big-endian. */
const INTERESTING = [0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff];
const INTERESTING_PICKS = INTERESTING.length * 3 * 2;

export function applyMutations(frame: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let b: Uint8Array = Uint8Array.from(frame);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % (b.length + 1);
    switch (m.op) {
      case 'flip':
        if (at < b.length) b[at]! ^= 1 << (m.bit & 7);
        break;
      case 'set':
        if (at < b.length) b[at] = m.value & 0xff;
        break;
      case 'interesting': {
        const value = INTERESTING[m.pick % INTERESTING.length]!;
        const width = [1, 2, 4][Math.floor(m.pick / INTERESTING.length) % 3]!;
        const le = m.pick % 2 === 0;
        for (let i = 0; i < width && at + i < b.length; i++) {
          const shift = 8 * (le ? i : width - 1 - i);
          b[at + i] = Math.floor(value / 2 ** shift) & 0xff;
        }
        break;
      }
      case 'cut':
        b = b.subarray(0, at);
        break;
      case 'insert':
        b = concat(b.subarray(0, at), m.bytes, b.subarray(at));
        break;
      case 'delete':
        b = concat(b.subarray(0, at), b.subarray(Math.min(b.length, at + m.n)));
        break;
      case 'repeat':
        b = concat(b.subarray(0, at + m.n), b.subarray(at, Math.min(b.length, at + m.n)), b.subarray(at + m.n));
        break;
    }
  }
  return b;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: fc.nat(255) }),
  fc.record({ op: fc.constant('interesting' as const), at: fc.nat(), pick: fc.nat(INTERESTING_PICKS - 1) }),
  fc.record({ op: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ op: fc.constant('repeat' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 64 }) }),
);

/** A frame for the properties: random, valid, or valid and mutated (`fix`: fixup after mutating). */
export interface FuzzFrame {
  bytes: Uint8Array;
  fix: boolean;
}

export function frameArb(codec: FuzzCodec): fc.Arbitrary<FuzzFrame> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: codec.maxRandom }).map((bytes) => ({ bytes, fix: false })) },
    { weight: 1, arbitrary: codec.valid.map((bytes) => ({ bytes, fix: false })) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(codec.valid, fc.array(mutationArb, { minLength: 1, maxLength: 6 }), fc.boolean())
        .map(([v, m, fix]) => ({ bytes: applyMutations(v, m), fix })),
    },
  );
}

/** The same mix as `frameArb`, fast, from a seeded generator (for a million frames). */
export class FrameSource {
  readonly #rng: SeededRandom;
  readonly #pool: Uint8Array[];
  readonly #maxRandom: number;

  constructor(codec: FuzzCodec, seed: number, poolSize = 512) {
    this.#rng = new SeededRandom(seed);
    this.#pool = fc.sample(codec.valid, { numRuns: poolSize, seed });
    this.#maxRandom = codec.maxRandom;
  }

  next(): FuzzFrame {
    const r = this.#rng;
    const kind = r.next();
    if (kind < 1 / 6) {
      const b = new Uint8Array(r.int(0, this.#maxRandom));
      for (let i = 0; i < b.length; i++) b[i] = r.int(0, 255);
      return { bytes: b, fix: false };
    }
    const seed = this.#pool[r.int(0, this.#pool.length - 1)]!;
    if (kind < 2 / 6) return { bytes: seed, fix: false };
    const n = r.int(1, 6);
    const muts: Mutation[] = [];
    for (let i = 0; i < n; i++) muts.push(this.#mutation());
    return { bytes: applyMutations(seed, muts), fix: r.next() < 0.5 };
  }

  #mutation(): Mutation {
    const r = this.#rng;
    const at = r.int(0, 0x7fffffff);
    switch (r.int(0, 6)) {
      case 0:
        return { op: 'flip', at, bit: r.int(0, 7) };
      case 1:
        return { op: 'set', at, value: r.int(0, 255) };
      case 2:
        return { op: 'interesting', at, pick: r.int(0, INTERESTING_PICKS - 1) };
      case 3:
        return { op: 'cut', at };
      case 4: {
        const bytes = new Uint8Array(r.int(1, 16));
        for (let i = 0; i < bytes.length; i++) bytes[i] = r.int(0, 255);
        return { op: 'insert', at, bytes };
      }
      case 5:
        return { op: 'delete', at, n: r.int(1, 64) };
      default:
        return { op: 'repeat', at, n: r.int(1, 64) };
    }
  }
}

// ---- R30x ------------------------------------------------------------------------------------

const r30x: FuzzCodec = {
  name: 'r30x',
  maxRandom: 600,
  // The parser keeps at most one unfinished packet (header, 512-byte payload, checksum).
  maxHeld: HEADER_LENGTH + MAX_PAYLOAD + 2,
  valid: fc.oneof(
    fc
      .record({
        pid: fc.constantFrom(0x01, 0x02, 0x07, 0x08),
        payload: fc.uint8Array({ maxLength: 300 }),
        address: fc.constantFrom(0xffffffff, 0x12345678),
      })
      .map((p) => encodeR30xPacket(p)),
    fc
      .tuple(
        fc.nat(255),
        fc.constantFrom(0, 2, 4, 16, 32, 46, 64).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
      )
      .map(([code, params]) => encodeAck(code, params)),
    fc
      .tuple(fc.uint8Array({ minLength: 1, maxLength: 600 }), fc.constantFrom(32, 64, 128, 256))
      .map(([data, size]) => encodeDataPackets(data, size)),
  ),
  create() {
    const parser = new R30xParser();
    return {
      feed(frame) {
        for (const r of parser.push(frame)) {
          if (!r.ok) continue; // a checksum error is an AgentError the driver hands on
          const ack = decodeAck(r.packet);
          const params = ack?.params ?? r.packet.payload;
          for (const cmd of R30X_COMMANDS.values()) {
            const req = (cmd.decodeRequest(params) ?? { page: 0 }) as never;
            refusing(() => cmd.decodeResponse(params, req));
          }
        }
      },
      held: () => parser.buffered,
      fixup(frame) {
        // The first packet's checksum made right when its header is whole.
        if (frame.length < HEADER_LENGTH || frame[0] !== 0xef || frame[1] !== 0x01) return frame;
        const length = (frame[7]! << 8) | frame[8]!;
        const end = HEADER_LENGTH + length;
        if (length < 2 || end > frame.length) return frame;
        const out = Uint8Array.from(frame);
        const sum = r30xChecksum(out[6]!, out.subarray(HEADER_LENGTH, end - 2));
        out[end - 2] = sum >> 8;
        out[end - 1] = sum & 0xff;
        return out;
      },
    };
  },
};

// ---- GT-521 ----------------------------------------------------------------------------------

const GT521_EXPECTED = [null, DEVINFO_SIZE, TEMPLATE_SIZE] as const;
const gt521: FuzzCodec = {
  name: 'gt521',
  maxRandom: 600,
  maxHeld: 0,
  valid: fc.oneof(
    fc.record({ parameter: fc.nat(), code: fc.constantFrom(ACK, NACK, ...Object.values(Gt521Command)) }).map((p) => encodeGt521Packet(p)),
    fc
      .constantFrom(DEVINFO_SIZE, TEMPLATE_SIZE, 16)
      .chain((n) => fc.uint8Array({ minLength: n, maxLength: n }))
      .map((d) => encodeGt521Data(d)),
    fc.uint8Array({ maxLength: 300 }).map((d) => encodeGt521Data(d)),
  ),
  create() {
    const commands = [...GT521_COMMANDS.values()];
    const parser = new Gt521Parser({
      packet: (p) => {
        for (const c of commands) {
          refusing(() => c.decodeRequest(p.parameter));
          refusing(() => c.decodeResponse(p.parameter, null));
        }
        if (p.code === NACK) refusing(() => new Gt521NackError(p.parameter, commands[p.parameter % commands.length]!.code));
      },
      data: (d) => {
        for (const c of commands) if (c.moduleData) refusing(() => c.decodeResponse(0, d.data));
      },
      error: () => undefined,
    });
    return {
      feed(frame) {
        // What the host expects next is its own state: cycle through nothing, device info, a template.
        parser.expectedDataLength = GT521_EXPECTED[frame.length % GT521_EXPECTED.length]!;
        parser.push(frame);
      },
      held: () => 0,
      fixup(frame) {
        const out = Uint8Array.from(frame);
        const dv = new DataView(out.buffer);
        if (out.length >= 12 && out[0] === 0x55 && out[1] === 0xaa) dv.setUint16(10, checksum16(out, 0, 10), true);
        else if (out.length >= 6 && out[0] === 0x5a && out[1] === 0xa5)
          dv.setUint16(out.length - 2, checksum16(out, 0, out.length - 2), true);
        return out;
      },
    };
  },
};

// ---- iris HID --------------------------------------------------------------------------------

/** Sizes a header may announce: the values length fields break on, and any. */
const announced = fc.oneof(
  fc.constantFrom(0, 1, 320 * 240, 640 * 480, 640 * 480 + 1, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff),
  fc.nat(),
);
const smallResult = fc
  .record({
    width: fc.integer({ min: 1, max: 40 }),
    height: fc.integer({ min: 1, max: 30 }),
    tag: fc.nat(255),
    kind: fc.constantFrom(2, 3, 7),
    seed: fc.nat(255),
  })
  .map((r) =>
    encodeResult({
      tag: r.tag,
      kind: r.kind,
      quality: 80,
      width: r.width,
      height: r.height,
      pupilX: 5,
      pupilY: 6,
      irisRadius: 7,
      flags: 1,
      captureMs: 99,
      pixels: Uint8Array.from({ length: r.width * r.height }, (_, i) => (i + r.seed) & 0xff),
    }),
  );

/** Makes a result message's CRC-32 right again when its header's sizes fit the frame. */
function fixResultCrc(frame: Uint8Array): Uint8Array {
  if (frame.length < RESULT_HEADER_SIZE + 4 || Buffer.from(frame.subarray(0, 4)).toString('latin1') !== 'IRIS') return frame;
  const out = Buffer.from(frame);
  const n = out.readUInt32LE(24);
  if (RESULT_HEADER_SIZE + n + 4 > out.length) return frame;
  out.writeUInt32LE(crc32(out.subarray(0, RESULT_HEADER_SIZE + n)), RESULT_HEADER_SIZE + n);
  return out;
}

const irisHid: FuzzCodec = {
  name: 'iris-hid',
  maxRandom: 200,
  maxHeld: 0,
  valid: fc.oneof(
    fc.record({ model: fc.string({ maxLength: 16 }), serial: fc.string({ maxLength: 16 }), ppi: fc.nat(0xffff) }).map((i) =>
      encodeDeviceInfo({
        protocolVersion: 1,
        model: i.model,
        firmware: '1.0',
        serial: i.serial,
        sensorWidth: 640,
        sensorHeight: 480,
        ppi: i.ppi,
        capabilities: 3,
      }),
    ),
    fc.record({ ir: fc.nat(255), color: fc.nat(3), blink: fc.nat(1) }).map(encodeLights),
    fc.record({ state: fc.nat(2), eyeInView: fc.boolean(), lastError: fc.nat(8) }).map(encodeStatus),
    fc
      .record({
        command: fc.constantFrom(0x10, 0x11, 0x12),
        tag: fc.nat(255),
        kind: fc.constantFrom(2, 3, 7),
        timeoutMs: fc.integer({ min: 1, max: 65535 }),
      })
      .map((c) =>
        encodeCommand(
          c.command,
          c.tag,
          c.command === 0x10
            ? encodeCaptureParams({ kind: c.kind, width: 320, height: 240, timeoutMs: c.timeoutMs, minQuality: 0 })
            : undefined,
        ),
      ),
    fc
      .record({ command: fc.nat(255), tag: fc.nat(255), status: fc.nat(9), detail: fc.uint8Array({ maxLength: 8 }) })
      .map((r) => encodeReply({ ...r, detail: Buffer.from(r.detail) }).subarray(1)),
    smallResult.map((m) => chunkResult(m)[0]!.subarray(1)),
    smallResult,
    fc.tuple(smallResult, announced).map(([m, n]) => {
      const b = Buffer.from(m);
      b.writeUInt32LE(n >>> 0, 24);
      return b;
    }),
  ),
  create() {
    return {
      feed(frame) {
        const b = Buffer.from(frame);
        refusing(() => decodeDeviceInfo(b));
        refusing(() => decodeLights(b));
        refusing(() => decodeStatus(b));
        refusing(() => {
          const cmd = decodeCommand(b);
          IRIS_COMMANDS.get(cmd.command)?.decodeRequest(cmd.params);
        });
        refusing(() => decodeReply(b));
        refusing(() => decodeChunk(b));
        refusing(() => readResultHeader(b));
        refusing(() => decodeResult(b));
      },
      held: () => 0,
      fixup: fixResultCrc,
    };
  },
};

/** An in-memory HID device that answers every command OK and lets the fuzzer speak for the camera. */
class FuzzHid extends TypedEmitter<TransportEvents> implements ReportTransport {
  readonly kind = 'hid' as const;
  readonly path = 'fuzz:iris';
  readonly isOpen = true;
  /** Tag of the last START_CAPTURE written. */
  captureTag = 0;

  async open(): Promise<void> {}
  async close(): Promise<void> {}
  async write(data: Uint8Array): Promise<void> {
    const command = data[1]!;
    const tag = data[2]!;
    if (command === 0x10) this.captureTag = tag;
    queueMicrotask(() => this.emit('data', encodeReply({ command, tag, status: 0, detail: Buffer.alloc(0) }).subarray(1)));
  }
  async sendFeatureReport(): Promise<void> {}
  async getFeatureReport(_id: number, length: number): Promise<Buffer> {
    return Buffer.alloc(length);
  }
  /** An input report from the camera's side. */
  send(body: Buffer): void {
    this.emit('data', body);
  }
  unplug(): void {
    this.emit('disconnect', disconnectedError(this.path, 'the fuzz run is over'));
  }
}

const CAPTURE = { kind: 3, width: 320, height: 240, timeoutMs: 60_000, minQuality: 0 };
/** The input reports (without report id) of one 320×240 result of capture tag 0. */
const RESULT_CHUNKS = resultBodies(
  croppedResult(
    0,
    Uint8Array.from({ length: 320 * 240 }, (_, i) => i & 0xff),
  ),
);

/** A first chunk whose header announces any size: the structure a length-field bug hides in. */
const firstChunkAnnouncing = fc
  .record({ n: announced, width: fc.constantFrom(320, 640, 0, 0xffff), height: fc.constantFrom(240, 480, 0, 0xffff) })
  .map(({ n, width, height }) => {
    const body = Buffer.from(RESULT_CHUNKS[0]!);
    body.writeUInt16LE(width, 4 + 8);
    body.writeUInt16LE(height, 4 + 10);
    body.writeUInt32LE(n >>> 0, 4 + 24);
    return body;
  });

const irisDriver: FuzzCodec = {
  name: 'iris-hid driver',
  maxRandom: 63,
  // Measured as the process's ArrayBuffer memory: one result is at most 307,236 bytes.
  maxHeld: 256 * 1024 * 1024,
  valid: fc.oneof(
    { weight: 3, arbitrary: fc.constant(RESULT_CHUNKS[0]!) },
    { weight: 2, arbitrary: firstChunkAnnouncing },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: RESULT_CHUNKS.length - 1 }).map((i) => RESULT_CHUNKS[i]!) },
    {
      weight: 1,
      arbitrary: fc
        .record({ status: fc.nat(9) })
        .map((r) => encodeReply({ command: 0x10, tag: 0, status: r.status, detail: Buffer.alloc(0) }).subarray(1)),
    },
  ),
  create() {
    const transport = new FuzzHid();
    const driver = new IrisHidDriver(transport, { timeoutMs: 60_000, retries: 2 });
    const baseline = process.memoryUsage().arrayBuffers;
    let capture: Promise<void> | null = null;
    let failure: unknown = null;
    let next = 0; // a chunk of the running transfer, so frames also continue one
    /** As the camera would send it for the running capture: a first chunk's and a reply's tag is the capture's. */
    const speak = (frame: Uint8Array) => {
      const body = Buffer.from(frame);
      if (body.length > 4 + 5 && body[0] === 0x02 && body.readUInt16LE(1) === 0) body[4 + 5] = transport.captureTag;
      if (body.length > 2 && body[0] === 0x01 && body[1] === 0x10) body[2] = transport.captureTag;
      try {
        transport.send(body);
      } catch (err) {
        // Whatever comes out of the transport's data listener is a crash, an AgentError too:
        // on a real device nothing catches it there.
        throw new Error(`the iris driver's report listener threw: ${(err as Error).stack ?? String(err)}`);
      }
    };
    const start = () => {
      capture = driver.capture(CAPTURE).then(
        () => undefined,
        (err: unknown) => {
          if (!isAgentError(err)) failure = err;
        },
      );
      void capture.finally(() => (capture = null));
    };
    return {
      async feed(frame) {
        if (!capture) {
          start();
          await new Promise<void>((r) => setImmediate(r)); // the START_CAPTURE and its reply
        }
        // Every fourth frame is the next chunk of the result as it should come, then the frame.
        if (next % 4 === 3) speak(RESULT_CHUNKS[(next >> 2) % RESULT_CHUNKS.length]!);
        next++;
        speak(frame); // a listener that throws throws here
        await Promise.resolve();
        if (failure) {
          const f = failure;
          failure = null;
          throw f;
        }
      },
      held: () => process.memoryUsage().arrayBuffers - baseline,
      fixup: (frame) => frame,
      async close() {
        transport.unplug();
        await capture;
        driver.detach();
        if (failure) throw failure;
      },
    };
  },
};

// ---- finger minutiae records -----------------------------------------------------------------

const minutia = fc.record({
  x: fc.nat(800),
  y: fc.nat(800),
  angle: fc.double({ min: 0, max: 6.28, noNaN: true }),
  type: fc.constantFrom('ending' as const, 'bifurcation' as const, 'other' as const),
  quality: fc.nat(100),
});
const view = fc.record({
  fingerPosition: fc.nat(10),
  viewNumber: fc.nat(15),
  impressionType: fc.nat(15),
  quality: fc.nat(100),
  minutiae: fc.array(minutia, { maxLength: 40 }),
});
const isoRecord = fc
  .record({
    width: fc.integer({ min: 1, max: 800 }),
    height: fc.integer({ min: 1, max: 800 }),
    captureEquipment: fc.nat(0xffff),
    views: fc.array(view, { minLength: 1, maxLength: 3 }),
  })
  .map((r) => encodeFingerRecord({ ...r, resolutionXPpcm: 197, resolutionYPpcm: 197 }));

type ViewValue = typeof view extends fc.Arbitrary<infer V> ? V : never;

/** An ANSI INCITS 378-2004 record (the agent reads ANSI, it writes ISO): 2-byte or 6-byte length form. */
function ansiRecord(r: { width: number; height: number; views: ViewValue[]; long: boolean }): Uint8Array {
  const head = r.long ? 18 : 14;
  const size = head + 12 + r.views.reduce((n, v) => n + 4 + 6 * v.minutiae.length + 2, 0);
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x46, 0x4d, 0x52, 0, 0x20, 0x32, 0x30, 0], 0);
  if (r.long) {
    dv.setUint16(8, 0);
    dv.setUint32(10, size);
  } else dv.setUint16(8, size);
  let o = head;
  dv.setUint16(o + 2, r.width);
  dv.setUint16(o + 4, r.height);
  dv.setUint16(o + 6, 197);
  dv.setUint16(o + 8, 197);
  out[o + 10] = r.views.length;
  o += 12;
  for (const v of r.views) {
    out.set([v.fingerPosition, (v.viewNumber << 4) | v.impressionType, v.quality, v.minutiae.length], o);
    o += 4;
    for (const m of v.minutiae) {
      dv.setUint16(o, ((m.type === 'ending' ? 1 : m.type === 'bifurcation' ? 2 : 0) << 14) | m.x);
      dv.setUint16(o + 2, m.y);
      out[o + 4] = Math.floor((m.angle * 180) / (2 * Math.PI)) % 180;
      out[o + 5] = m.quality;
      o += 6;
    }
    o += 2;
  }
  return out;
}
const ansi = fc
  .record({
    width: fc.integer({ min: 1, max: 800 }),
    height: fc.integer({ min: 1, max: 800 }),
    views: fc.array(view, { minLength: 1, maxLength: 3 }),
    long: fc.boolean(),
  })
  .map(ansiRecord);

function fingerTarget(): FuzzTarget {
  return {
    feed(frame) {
      refusing(() => decodeFingerRecord(frame));
      decodeFingerTemplate(frame);
    },
    held: () => 0,
  };
}

const iso19794: FuzzCodec = { name: 'iso19794-2', maxRandom: 400, maxHeld: 0, valid: isoRecord, create: fingerTarget };
const ansi378: FuzzCodec = { name: 'ansi378', maxRandom: 400, maxHeld: 0, valid: ansi, create: fingerTarget };

// ---- iris codes and template files -----------------------------------------------------------

const irisTemplate = fc
  .record({
    code: fc.uint8Array({ minLength: IRIS_CODE_BYTES, maxLength: IRIS_CODE_BYTES }),
    mask: fc.uint8Array({ minLength: IRIS_CODE_BYTES, maxLength: IRIS_CODE_BYTES }),
    quality: fc.oneof(fc.nat(100), fc.constant(255)),
  })
  .map((c) => encodeIrisTemplate({ version: 1, rings: 8, angles: 128, ...c }));

function fixTrailingCrc(frame: Uint8Array): Uint8Array {
  if (frame.length < 8) return frame;
  const out = Uint8Array.from(frame);
  new DataView(out.buffer).setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)));
  return out;
}

const irisCode: FuzzCodec = {
  name: 'iris code',
  maxRandom: 600,
  maxHeld: 0,
  valid: irisTemplate,
  create: () => ({ feed: (frame) => void decodeIrisTemplate(frame), held: () => 0, fixup: fixTrailingCrc }),
};

const templateFile: FuzzCodec = {
  name: 'template file',
  maxRandom: 600,
  maxHeld: 0,
  valid: fc.oneof(isoRecord, ansi, irisTemplate),
  create: () => ({
    feed: (frame) => void readTemplate(frame, 'fuzz'),
    held: () => 0,
    fixup: (f) => (f[0] === 0x45 ? fixTrailingCrc(f) : f),
  }),
};

// ---- site records ----------------------------------------------------------------------------

const SITE_KEY = createHash('sha256').update('fuzz site key').digest();
const siteRecordText = fc
  .record({
    version: fc.integer({ min: 1, max: 2 ** 40 }),
    deleted: fc.boolean(),
    v: fc.constantFrom(1, 2),
    templates: fc.array(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 12 }),
        modality: fc.constantFrom('finger', 'iris'),
        position: fc.constantFrom(null, 'right-index'),
        format: fc.constantFrom('iso19794-2', 'iris-code-v1', 'r30x-char'),
        quality: fc.oneof(fc.constant(null), fc.nat(100)),
        sensorModel: fc.constant(null),
        data: fc.uint8Array({ maxLength: 48 }).map((d) => Buffer.from(d).toString('base64')),
      }),
      { maxLength: 3 },
    ),
  })
  .map((r) =>
    Buffer.from(
      JSON.stringify({
        v: r.v,
        version: r.version,
        deleted: r.deleted && r.templates.length === 0,
        employeeCode: 'E1',
        updatedAt: '2026-03-01T08:00:00.000Z',
        origin: 'gate-1',
        templates: r.templates.map((t) => ({ ...t, createdAt: '2026-03-01T08:00:00.000Z' })),
      }),
    ),
  );

const siteRecords: FuzzCodec = {
  name: 'site records',
  maxRandom: 400,
  maxHeld: 0,
  valid: fc.oneof(
    siteRecordText,
    siteRecordText.map((p) => sealSiteRecord(SITE_KEY, 'plant-1', 'E1', p)),
  ),
  create: () => ({
    feed(frame) {
      const b = Buffer.from(frame);
      refusing(() => parseRecord(b, 'E1')); // the plaintext as a terminal reads it
      refusing(() => parseRecord(openSiteRecord(SITE_KEY, 'plant-1', 'E1', b), 'E1')); // the message as it comes
      parseRecord(openSiteRecord(SITE_KEY, 'plant-1', 'E1', sealSiteRecord(SITE_KEY, 'plant-1', 'E1', b)), 'E1'); // sealed right
    },
    held: () => 0,
  }),
};

// ---- ops requests ----------------------------------------------------------------------------

const OPS_KEY = createHash('sha256').update('fuzz ops key').digest();
const SIGNED_COMMANDS = ['delete-user', 'retry-dead', 'set-log-level', 'ping'] as const;
const opsArgs = fc.oneof(
  fc.record({ employeeCode: fc.oneof(fc.string({ maxLength: 70 }), fc.constant('E1001')) }),
  fc.record({ ids: fc.array(fc.string({ maxLength: 30 }), { maxLength: 5 }) }),
  fc.record({ level: fc.constantFrom('info', 'debug', 'nope'), module: fc.constantFrom('upload:*', 'x y') }),
  fc.constant({}),
);

const opsRequests: FuzzCodec = {
  name: 'ops requests',
  maxRandom: 400,
  maxHeld: 0,
  valid: fc
    .record({ transaction: fc.string({ minLength: 1, maxLength: 20 }), args: opsArgs, ts: fc.integer({ min: 0, max: 2 ** 45 }) })
    .map((r) =>
      Buffer.from(
        JSON.stringify({
          transaction: r.transaction,
          ...r.args,
          auth: { kid: 'site', ts: r.ts, mac: randomBytes(32).toString('base64url') },
        }),
      ),
    ),
  create() {
    let now = 1_800_000_000_000;
    let n = 0;
    const auth = new OpsAuthenticator({
      site: 'plant-1',
      terminal: 'gate-1',
      keyring: { key: (kid) => (kid === 'site' ? OPS_KEY : null), ids: ['site'] },
      windowMs: 60_000,
      now: () => now,
    });
    return {
      async feed(frame) {
        now += 1000;
        const command = SIGNED_COMMANDS[n++ % SIGNED_COMMANDS.length]!;
        const req = parseRequest(Buffer.from(frame));
        for (const schema of Object.values(OPS_ARGUMENTS)) schema.safeParse(req.args);
        await auth.verify({ command, transaction: req.transaction, args: req.args, auth: req.auth });
      },
      held: () => 0,
      fixup(frame) {
        // Signed again with the right key, for the command the next feed asks about, at its time.
        let value: unknown;
        try {
          value = JSON.parse(Buffer.from(frame).toString('utf8'));
        } catch {
          return frame;
        }
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return frame;
        const { transaction, auth: _auth, ...args } = value as Record<string, unknown>;
        const t = typeof transaction === 'string' && transaction !== '' ? transaction : `t${n}`;
        try {
          const signed = signCommand(OPS_KEY, {
            site: 'plant-1',
            terminal: 'gate-1',
            command: SIGNED_COMMANDS[n % SIGNED_COMMANDS.length]!,
            transaction: t,
            ts: now + 1000,
            kid: 'site',
            args,
          });
          return Buffer.from(JSON.stringify({ ...args, transaction: t, auth: signed }));
        } catch (err) {
          if (isAgentError(err)) return frame; // arguments that cannot be signed stay unsigned
          throw err;
        }
      },
    };
  },
};

// ---- badge readers -----------------------------------------------------------------------------

/** Card frames of every line format (bit lines and facility,card pairs, some with a broken check). */
const badgeFrame = fc
  .record({
    format: fc.constantFrom(...BADGE_FORMATS),
    value: fc.nat(0xffffff),
    style: fc.constantFrom('bits' as const, 'pair' as const),
    badChecksum: fc.boolean(),
  })
  .map((c) => Buffer.from(BADGE_CODECS[c.format].encode(c.value, { style: c.style, badChecksum: c.badChecksum }), 'latin1'));

/**
 * A badge reader fed through its transport's data listener, as the device would: nothing may come
 * out of the listener (nothing catches it there), a read or a failed read waits as a result or an
 * AgentError, and what waits is bounded (the reads queued, the line kept for its delimiter).
 */
function badgeTarget(
  make: (wire: FuzzHid, format: (typeof BADGE_FORMATS)[number]) => BadgeReader,
  formats: readonly (typeof BADGE_FORMATS)[number][],
  toWire: (frame: Uint8Array) => Buffer[],
): () => FuzzTarget {
  let made = 0;
  return () => {
    const wire = new FuzzHid();
    const reader = make(wire, formats[made++ % formats.length]!);
    const baseline = process.memoryUsage().arrayBuffers;
    return {
      async feed(frame) {
        for (const chunk of toWire(frame)) {
          try {
            wire.send(chunk);
          } catch (err) {
            throw new Error(`the badge reader's data listener threw: ${(err as Error).stack ?? String(err)}`);
          }
        }
        // Take what waits, as the scanner worker would: reads, or AgentErrors for misreads.
        for (let i = 0; i <= MAX_QUEUED; i++) {
          try {
            await reader.readCredential();
          } catch (err) {
            if (!isAgentError(err)) throw err;
            if (err.code === 'DRIVER_NO_CARD') break;
          }
        }
      },
      held: () => process.memoryUsage().arrayBuffers - baseline,
    };
  };
}

const badgeSerial: FuzzCodec = {
  name: 'badge serial',
  maxRandom: 200,
  // A reader keeps at most MAX_FRAME_BYTES of a line and MAX_QUEUED reads; what is measured is the
  // process's ArrayBuffer memory, so the bound is loose and catches a buffer that grows without end.
  maxHeld: 64 * 1024 * 1024,
  valid: fc.oneof(
    badgeFrame,
    fc.array(badgeFrame, { minLength: 2, maxLength: 4 }).map((f) => Buffer.concat(f)),
    fc.constant(Buffer.alloc(MAX_FRAME_BYTES + 1, 0x31)),
  ),
  create: badgeTarget(
    (wire, format) => new BadgeSerialReader(wire, { format, holdOffMs: 0 }),
    BADGE_FORMATS,
    (frame) => [Buffer.from(frame)],
  ),
};

const TYPEABLE = BADGE_FORMATS.filter((f) => BADGE_CODECS[f].typeable);
const badgeKeyboard: FuzzCodec = {
  name: 'badge keyboard',
  maxRandom: 64,
  maxHeld: 64 * 1024 * 1024,
  // One frame is the reports that type a card; a mutated one has keys, modifiers and lengths changed.
  valid: badgeFrame.filter((b) => b[0] !== 0x02).map((b) => Buffer.concat(typeText(b.toString('latin1')))),
  create: badgeTarget(
    (wire, format) => new BadgeHidReader({ transport: wire, format, holdOffMs: 0 }),
    TYPEABLE,
    (frame) => {
      // Boot-keyboard reports of 8 bytes (the last one as short as the frame leaves it).
      const out: Buffer[] = [];
      for (let o = 0; o < frame.length; o += 8) out.push(Buffer.from(frame.subarray(o, o + 8)));
      return out;
    },
  ),
};

/** Every codec, in the order the benchmark reports them. */
export const FUZZ_CODECS: readonly FuzzCodec[] = [
  r30x,
  gt521,
  irisHid,
  irisDriver,
  iso19794,
  ansi378,
  irisCode,
  templateFile,
  siteRecords,
  opsRequests,
  badgeSerial,
  badgeKeyboard,
];
