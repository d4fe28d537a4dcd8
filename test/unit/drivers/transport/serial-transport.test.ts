// The serial transport against the contract on a real socat PTY pair.
import { describe, expect, it } from 'vitest';
import { SerialPort } from 'serialport';
import { mkdtempSync, writeFileSync, chmodSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialTransport, openError } from '../../../../drivers/transport/serial-transport.js';
import { reopenWithBackoff } from '../../../../drivers/transport/reopen.js';
import { createPtyPair } from '../../../helpers/pty.js';
import { transportContract } from './transport-contract.js';
import { isAgentError } from '../../../../src/core/errors.js';

transportContract('serial on a socat PTY', {
  async make() {
    const pair = await createPtyPair();
    const device = new SerialPort({ path: pair.b, baudRate: 115200, autoOpen: false });
    await new Promise<void>((res, rej) => device.open((e) => (e ? rej(e) : res())));
    let inbox = Buffer.alloc(0);
    device.on('data', (d: Buffer) => (inbox = Buffer.concat([inbox, d])));
    device.on('error', () => undefined);
    return {
      transport: new SerialTransport({ path: pair.a, baud: 115200, watchdogMs: 50 }),
      peer: {
        send: (d) => new Promise<void>((res, rej) => device.write(Buffer.from(d), (e) => (e ? rej(e) : device.drain(() => res())))),
        async receive(length, timeoutMs = 3000) {
          const deadline = Date.now() + timeoutMs;
          while (inbox.length < length) {
            if (Date.now() > deadline) throw new Error(`peer got ${inbox.length} of ${length} bytes`);
            await new Promise((r) => setTimeout(r, 10));
          }
          const out = inbox.subarray(0, length);
          inbox = inbox.subarray(length);
          return out;
        },
        unplug: () => pair.close(),
      },
      cleanup: async () => {
        if (device.isOpen) await new Promise((r) => device.close(r));
        await pair.close();
      },
    };
  },
  makeMissing: () => new SerialTransport({ path: '/dev/ttyUSB-does-not-exist', baud: 57600 }),
  disconnectWithinMs: 1000,
});

describe('serial transport', () => {
  it('maps a permission error to TRANSPORT_PERMISSION with the dialout hint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'serial-'));
    const p = join(dir, 'tty');
    writeFileSync(p, '');
    chmodSync(p, 0o000);
    const err = openError(p, 57600, Object.assign(new Error('Error: Permission denied, cannot open ' + p), { code: 'EACCES' }));
    expect(err.code).toBe('TRANSPORT_PERMISSION');
    expect(err.hint).toMatch(/dialout/);
    expect(err.hint).toMatch(/udev/);
  });

  it('maps a busy port to TRANSPORT_OPEN_FAILED and anything else too', async () => {
    const pair = await createPtyPair();
    try {
      expect(openError(pair.a, 9600, new Error('Error Resource temporarily unavailable Cannot lock port')).code).toBe('TRANSPORT_OPEN_FAILED');
      // A regular file is not a tty: serialport refuses it.
      const dir = mkdtempSync(join(tmpdir(), 'serial-'));
      const p = join(dir, 'not-a-tty');
      writeFileSync(p, '');
      const err = await new SerialTransport({ path: p, baud: 9600 }).open().then(() => null, (e: unknown) => e);
      expect(isAgentError(err, 'TRANSPORT_OPEN_FAILED')).toBe(true);
    } finally {
      await pair.close();
    }
  });

  it('reopens with backoff once the device is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reopen-'));
    const link = join(dir, 'link');
    const t = new SerialTransport({ path: link, baud: 57600 });
    const retries: string[] = [];
    let pair: Awaited<ReturnType<typeof createPtyPair>> | undefined;
    const reopened = reopenWithBackoff(t, {
      baseMs: 20,
      capMs: 80,
      onRetry: (err) => {
        retries.push(isAgentError(err) ? err.code : String(err));
        if (retries.length === 2) {
          void createPtyPair().then((p) => {
            pair = p;
            symlinkSync(p.a, link);
          });
        }
      },
    });
    const attempts = await reopened;
    expect(retries.slice(0, 2)).toEqual(['TRANSPORT_NOT_FOUND', 'TRANSPORT_NOT_FOUND']);
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(t.isOpen).toBe(true);
    await t.close();
    await pair?.close();
  });

  it('gives up after maxAttempts with the last error', async () => {
    const t = new SerialTransport({ path: '/dev/ttyUSB-nope', baud: 57600 });
    const err = await reopenWithBackoff(t, { baseMs: 1, capMs: 2, maxAttempts: 3 }).then(() => null, (e: unknown) => e);
    expect(isAgentError(err, 'TRANSPORT_NOT_FOUND')).toBe(true);
  });
});

