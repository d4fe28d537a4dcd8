/**
 * The encrypted snapshot of the in-memory identification indexes (`<dataDir>/index-snapshot.bin`,
 * mode 0600), so a terminal with 110,000 templates is ready in a second or two instead of
 * decrypting and preparing every template again at each start.
 *
 * File: `EAIX` (4 bytes), the header length (u32 LE), the header (JSON, in clear and
 * authenticated: format, the cache's instance and generation, the matchers' meta, the byte length
 * of each section), a 12-byte nonce, then the sections encrypted with AES-256-GCM as one stream,
 * then the 16-byte tag. The key is derived from the template key (HKDF-SHA256, info
 * `edge-agent/index-snapshot/v1`), so the snapshot is as protected as the templates themselves,
 * and a snapshot made under another key does not open.
 *
 * Written and read in slices of 1 MB straight from and into the indexes' own arrays: no second
 * copy of the gallery in memory at any time. A snapshot that does not open (missing, truncated,
 * altered, another key or format) is reported as such and the caller builds from the cache.
 *
 * Tested in test/unit/terminal/identifier-snapshot.test.ts (loaded when it fits; never served
 * altered, under another key or for another database) and
 * test/integration/identify-template.test.ts.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const INDEX_SNAPSHOT_FILE = 'index-snapshot.bin';
const MAGIC = Buffer.from('EAIX', 'latin1');
const FORMAT = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SLICE = 1 << 16;
/** A header larger than this is not one of ours. */
const MAX_HEADER = 1 << 20;

export function indexSnapshotPath(dataDir: string): string {
  return join(dataDir, INDEX_SNAPSHOT_FILE);
}

export interface SnapshotHeader {
  format: number;
  /** The template cache's instance (random per database). */
  instance: string;
  /** The cache's change number the indexes hold (every change up to it, perhaps some after). */
  generation: number;
  /** Per matcher (modality): its own meta (format version, counts...). */
  matchers: Record<string, unknown>;
  sections: number[];
}

function snapshotKey(templateKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', templateKey, Buffer.alloc(0), 'edge-agent/index-snapshot/v1', 32));
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * Writes the snapshot synchronously (the sections are the live arrays: nothing may change them
 * while this runs), to a temporary file made durable and then renamed over the old one.
 * Returns the bytes written.
 */
export function writeIndexSnapshot(
  path: string,
  templateKey: Buffer,
  header: Omit<SnapshotHeader, 'format' | 'sections'>,
  sections: ArrayBufferView[],
): number {
  const full: SnapshotHeader = { format: FORMAT, ...header, sections: sections.map((s) => s.byteLength) };
  const head = Buffer.from(JSON.stringify(full), 'utf8');
  const prefix = Buffer.alloc(8);
  MAGIC.copy(prefix, 0);
  prefix.writeUInt32LE(head.length, 4);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', snapshotKey(templateKey), nonce);
  cipher.setAAD(Buffer.concat([prefix, head]));
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  let written = 0;
  try {
    const put = (b: Uint8Array) => {
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off, b.length - off);
      written += b.length;
    };
    put(prefix);
    put(head);
    put(nonce);
    for (const s of sections) {
      const bytes = bytesOf(s);
      for (let off = 0; off < bytes.length; off += SLICE) put(cipher.update(bytes.subarray(off, Math.min(bytes.length, off + SLICE))));
    }
    put(cipher.final());
    put(cipher.getAuthTag());
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  return written;
}

export type SnapshotRead = { ok: true; header: SnapshotHeader } | { ok: false; reason: string };

/**
 * Reads a snapshot: `accept(header)` says whether it fits (instance, generation, formats) and
 * returns where each section goes (an array of exactly that section's byte length), or a reason
 * to refuse it. The sections are decrypted straight into those arrays; they hold the snapshot
 * only when the result is ok (the tag is checked last: on a failure throw them away).
 */
export function readIndexSnapshot(
  path: string,
  templateKey: Buffer,
  accept: (header: SnapshotHeader) => ArrayBufferView[] | string,
): SnapshotRead {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return {
      ok: false,
      reason: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no snapshot yet' : `cannot open it: ${(err as Error).message}`,
    };
  }
  try {
    let pos = 0;
    const read = (into: Uint8Array): boolean => {
      let off = 0;
      while (off < into.length) {
        const n = readSync(fd, into, off, into.length - off, pos);
        if (n === 0) return false;
        off += n;
        pos += n;
      }
      return true;
    };
    const prefix = Buffer.alloc(8);
    if (!read(prefix) || !prefix.subarray(0, 4).equals(MAGIC)) return { ok: false, reason: 'not an index snapshot' };
    const headLength = prefix.readUInt32LE(4);
    if (headLength > MAX_HEADER) return { ok: false, reason: 'not an index snapshot' };
    const head = Buffer.alloc(headLength);
    if (!read(head)) return { ok: false, reason: 'truncated' };
    let header: SnapshotHeader;
    try {
      header = JSON.parse(head.toString('utf8')) as SnapshotHeader;
    } catch {
      return { ok: false, reason: 'damaged header' };
    }
    if (header.format !== FORMAT || !Array.isArray(header.sections))
      return { ok: false, reason: `format ${String(header.format)} is not ${FORMAT}` };
    const targets = accept(header);
    if (typeof targets === 'string') return { ok: false, reason: targets };
    if (targets.length !== header.sections.length || targets.some((t, i) => t.byteLength !== header.sections[i]))
      return { ok: false, reason: 'sections do not match the header' };
    const nonce = Buffer.alloc(NONCE_BYTES);
    if (!read(nonce)) return { ok: false, reason: 'truncated' };
    const decipher = createDecipheriv('aes-256-gcm', snapshotKey(templateKey), nonce);
    decipher.setAAD(Buffer.concat([prefix, head]));
    const slice = Buffer.alloc(SLICE);
    for (const t of targets) {
      const out = bytesOf(t);
      for (let off = 0; off < out.length; off += SLICE) {
        const part = slice.subarray(0, Math.min(SLICE, out.length - off));
        if (!read(part)) return { ok: false, reason: 'truncated' };
        out.set(decipher.update(part), off);
      }
    }
    const tag = Buffer.alloc(TAG_BYTES);
    if (!read(tag)) return { ok: false, reason: 'truncated' };
    decipher.setAuthTag(tag);
    try {
      decipher.final();
    } catch {
      return { ok: false, reason: 'does not authenticate (altered, or made under another template key)' };
    }
    return { ok: true, header };
  } finally {
    closeSync(fd);
  }
}

/** Removes the snapshot (a template key change makes it useless). */
export function removeIndexSnapshot(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // not there
  }
}
