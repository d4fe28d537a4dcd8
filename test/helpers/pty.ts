/** A real pseudo-terminal pair made by socat: open `a` with one side and `b` with the other. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSocatPair } from '../../drivers/transport/socat-pair.js';

export interface PtyPair {
  a: string;
  b: string;
  close(): Promise<void>;
}

/** The same socat pair the `simulate` command serves on; `a` is the host end, `b` the device end. */
export async function createPtyPair(): Promise<PtyPair> {
  const pair = await createSocatPair(join(mkdtempSync(join(tmpdir(), 'pty-')), 'a'));
  return { a: pair.hostLink, b: pair.deviceLink, close: () => pair.close() };
}
