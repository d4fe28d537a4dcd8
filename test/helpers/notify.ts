/**
 * A stand-in for systemd's notify socket: an AF_UNIX datagram socket bound with the same
 * `unix-dgram` addon the agent sends with, recording each datagram as one message.
 * Needs the addon: declare the suite with `describe.skipIf(!loads('unix-dgram'))`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unixDgram } from '../../src/daemon/sd-notify.js';

export interface NotifyReceiver {
  /** The socket's path, for `NOTIFY_SOCKET`. */
  path: string;
  /** Every datagram received so far, in order. */
  messages(): string[];
  /** Resolves once `done(messages)` holds; throws with the messages so far after `timeoutMs`. */
  waitFor(done: (messages: string[]) => boolean, timeoutMs?: number): Promise<string[]>;
  close(): void;
}

/** Binds a receiver at `at` (default: a new temporary folder, removed on close). */
export async function startNotifyReceiver(at?: string): Promise<NotifyReceiver> {
  const dgram = unixDgram();
  if (!dgram) throw new Error('the unix-dgram addon is not installed (npm skips it where it does not build)');
  const dir = at ? null : mkdtempSync(join(tmpdir(), 'notify-'));
  const path = at ?? join(dir!, 'notify.sock');
  const received: string[] = [];
  const sock = dgram.createSocket('unix_dgram');
  sock.on('message', (msg) => received.push(msg.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    sock.on('listening', resolve);
    sock.on('error', reject);
    sock.bind(path);
  });
  let closed = false;
  return {
    path,
    messages: () => [...received],
    async waitFor(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(received)) {
        if (Date.now() > deadline) throw new Error(`notify messages so far: ${JSON.stringify(received)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return [...received];
    },
    close() {
      if (closed) return;
      closed = true;
      sock.close();
      rmSync(dir ?? path, { recursive: true, force: true });
    },
  };
}
