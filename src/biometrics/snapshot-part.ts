/**
 * How an in-memory index hands its state to a snapshot and takes it back (the snapshot file and
 * its encryption are the store's: src/store/index-snapshot.ts). The sections are the index's own
 * arrays, written and filled in place: no copy of a gallery is ever made.
 *
 * Tested in test/unit/terminal/identifier-snapshot.test.ts (the indexes handed to a snapshot and
 * loaded back identify the same).
 */
export interface SnapshotPart {
  /** What the loader needs to size its arrays, and the layout's version. */
  meta: Record<string, unknown>;
  sections: ArrayBufferView[];
}

export interface SnapshotLoad {
  /** Where the sections go, sized from the meta. */
  targets: ArrayBufferView[];
  /** The targets hold the snapshot: make it the index's state. */
  commit(): void;
}

/**
 * A list of strings (ids, employee codes) as bytes: the count, each one's UTF-8 length (u32 LE),
 * then the bytes. Decoding makes the strings and nothing else (no JSON text of megabytes to parse
 * and throw away while a gallery of 100,000 loads).
 */
export function idsToBytes(ids: ReadonlyArray<string | undefined>): Uint8Array {
  const encoded = ids.map((id) => Buffer.from(id ?? '', 'utf8'));
  const out = Buffer.alloc(4 + 4 * ids.length + encoded.reduce((n, b) => n + b.length, 0));
  out.writeUInt32LE(ids.length, 0);
  let at = 4 + 4 * ids.length;
  encoded.forEach((b, i) => {
    out.writeUInt32LE(b.length, 4 + 4 * i);
    b.copy(out, at);
    at += b.length;
  });
  return out;
}

export function idsFromBytes(bytes: Uint8Array): string[] {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = b.length >= 4 ? b.readUInt32LE(0) : -1;
  if (n < 0 || 4 + 4 * n > b.length) throw new Error('the snapshot ids are damaged');
  const out = new Array<string>(n);
  let at = 4 + 4 * n;
  for (let i = 0; i < n; i++) {
    const len = b.readUInt32LE(4 + 4 * i);
    if (at + len > b.length) throw new Error('the snapshot ids are damaged');
    out[i] = b.toString('utf8', at, at + len);
    at += len;
  }
  return out;
}

/** A Map from each string of `list` to its position (a loop: no array of pairs in between). */
export function positions(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < list.length; i++) m.set(list[i]!, i);
  return m;
}

/** A number of the meta, checked: a non-negative integer, else null. */
export function count(meta: Record<string, unknown>, key: string): number | null {
  const v = meta[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}
