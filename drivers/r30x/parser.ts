/**
 * Stream parser for R30x packets. Bytes arrive in any chunking; whole packets come out. Garbage
 * before a start code is skipped; a header with an unknown packet id or an impossible length, or a
 * packet whose checksum does not add up, is rejected and the parser resynchronizes on the next
 * `EF 01` after the bad start code (so a corrupt length never swallows the packets behind it).
 */
import { AgentError } from '../../src/core/errors.js';
import { HEADER_LENGTH, MAX_PAYLOAD, PACKET_IDS, checksum, type R30xPacket } from './codec.js';

export type ParseResult = { ok: true; packet: R30xPacket } | { ok: false; error: AgentError };

export class R30xParser {
  #buf: Buffer = Buffer.alloc(0);
  /** Bytes skipped as garbage since the last reset (for diagnostics). */
  skipped = 0;

  /** Feeds bytes; returns every packet (or checksum error) completed by them, in order. */
  push(chunk: Uint8Array): ParseResult[] {
    this.#buf = this.#buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buf, chunk]);
    const out: ParseResult[] = [];
    let pos = 0;
    const buf = this.#buf;
    while (true) {
      const start = findStart(buf, pos);
      if (start < 0) {
        // Keep a trailing 0xEF: it may be the first half of a start code.
        const keep = buf.length > pos && buf[buf.length - 1] === 0xef ? buf.length - 1 : buf.length;
        this.skipped += keep - pos;
        pos = keep;
        break;
      }
      this.skipped += start - pos;
      pos = start;
      if (buf.length - pos < HEADER_LENGTH) break;
      const pid = buf[pos + 6]!;
      const length = buf.readUInt16BE(pos + 7);
      if (!PACKET_IDS.has(pid) || length < 2 || length > MAX_PAYLOAD + 2) {
        pos += 1;
        this.skipped += 1;
        continue;
      }
      const total = HEADER_LENGTH + length;
      if (buf.length - pos < total) break;
      const payload = Buffer.from(buf.subarray(pos + HEADER_LENGTH, pos + total - 2));
      const got = buf.readUInt16BE(pos + total - 2);
      const want = checksum(pid, payload);
      const address = buf.readUInt32BE(pos + 2);
      if (got !== want) {
        out.push({
          ok: false,
          error: new AgentError(
            'DRIVER_CHECKSUM',
            `R30x packet checksum mismatch (got 0x${got.toString(16)}, computed 0x${want.toString(16)})`,
            { pid, length, got, want },
            { hint: 'electrical noise or a wrong baud rate on the serial line; check the wiring and the baud setting', retryable: true },
          ),
        });
        pos += 1;
        continue;
      }
      out.push({ ok: true, packet: { address, pid, payload } });
      pos += total;
    }
    this.#buf = pos >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(pos));
    return out;
  }

  /** Bytes waiting for the rest of a packet. */
  get buffered(): number {
    return this.#buf.length;
  }

  reset(): void {
    this.#buf = Buffer.alloc(0);
  }
}

function findStart(buf: Buffer, from: number): number {
  for (let i = from; i < buf.length - 1; i++) {
    if (buf[i] === 0xef && buf[i + 1] === 0x01) return i;
  }
  return -1;
}
