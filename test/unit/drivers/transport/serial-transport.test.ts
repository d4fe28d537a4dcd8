// The serial transport against the contract: over serialport's mock binding everywhere, and over a
// real socat pty pair where socat exists.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, chmodSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPortMock } from 'serialport';
import { SerialTransport, openError } from '../../../../drivers/transport/serial-transport.js';
import { reopenWithBackoff } from '../../../../drivers/transport/reopen.js';
import { createPtyPair } from '../../../helpers/pty.js';
import { has } from '../../../helpers/system.js';
import { transportContract } from './transport.contract.js';
import { mockLine, ptyLine, type SerialLine } from './serial-lines.fixture.js';
import { isAgentError, type AgentError } from '../../../../src/core/errors.js';

function serialContract(name: string, makeLine: () => Promise<SerialLine>, makeMissing: () => SerialTransport): void {
  transportContract(name, {
    async make() {
      const line = await makeLine();
      const device = line.device(115200);
      await device.open();
      let inbox = Buffer.alloc(0);
      device.on('data', (d: Buffer) => (inbox = Buffer.concat([inbox, d])));
      return {
        transport: line.host(115200, { watchdogMs: 50 }),
        peer: {
          send: (d) => device.write(d),
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
          unplug: () => line.unplug(),
        },
        cleanup: async () => {
          await device.close();
          await line.close();
        },
      };
    },
    makeMissing,
    disconnectWithinMs: 1000,
  });
}

serialContract(
  'serial on @serialport/binding-mock',
  mockLine,
  () => new SerialTransport({ path: '/dev/mock-tty-not-created', baud: 57600, binding: SerialPortMock.binding }),
);

describe.skipIf(!has('socat'))('serial transport on a real pty (needs socat)', () => {
  serialContract('serial on a socat PTY', ptyLine, () => new SerialTransport({ path: '/dev/ttyUSB-does-not-exist', baud: 57600 }));

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

  it('a port another opener holds is TRANSPORT_BUSY naming the holder (serialport locks it), and opens once it is free', async () => {
    const pair = await createPtyPair();
    const first = new SerialTransport({ path: pair.a, baud: 57600 });
    await first.open();
    try {
      const err = await new SerialTransport({ path: pair.a, baud: 57600 }).open().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentError(err, 'TRANSPORT_BUSY')).toBe(true);
      const e = err as AgentError;
      expect(e.message).toContain(`this process (pid ${process.pid})`);
      expect(e.context.holders).toEqual([expect.objectContaining({ pid: process.pid })]);
      expect(e.hint).toContain(`stop pid ${process.pid}`);
    } finally {
      await first.close();
    }
    const second = new SerialTransport({ path: pair.a, baud: 57600 });
    await second.open();
    expect(second.isOpen).toBe(true);
    await second.close();
    await pair.close();
  });
});

describe('serial transport', () => {
  it('maps a permission error to TRANSPORT_PERMISSION with the dialout hint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'serial-'));
    const p = join(dir, 'tty');
    writeFileSync(p, '');
    chmodSync(p, 0o000);
    const err = openError(p, 57600, Object.assign(new Error(`Error: Permission denied, cannot open ${p}`), { code: 'EACCES' }));
    expect(err.code).toBe('TRANSPORT_PERMISSION');
    expect(err.hint).toMatch(/dialout/);
    expect(err.hint).toMatch(/udev/);
  });

  it("maps serialport's 'Cannot lock port' to TRANSPORT_BUSY, anything else to TRANSPORT_OPEN_FAILED", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serial-'));
    const p = join(dir, 'not-a-tty');
    writeFileSync(p, '');
    const busy = openError(p, 9600, new Error('Error Resource temporarily unavailable Cannot lock port'));
    expect(busy.code).toBe('TRANSPORT_BUSY');
    expect(busy.message).toMatch(/is in use by another program/);
    expect(busy.hint).toMatch(/fuser -v|stop pid/);
    // A regular file is not a tty: serialport refuses it.
    const err = await new SerialTransport({ path: p, baud: 9600 }).open().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'TRANSPORT_OPEN_FAILED')).toBe(true);
  });

  it('reopens with backoff once the device is back (mock line)', async () => {
    const line = await mockLine();
    await line.unplug();
    const t = line.host(57600);
    const retries: string[] = [];
    const attempts = await reopenWithBackoff(t, {
      baseMs: 20,
      capMs: 80,
      onRetry: (err) => {
        retries.push(isAgentError(err) ? err.code : String(err));
        if (retries.length === 2) void line.replug();
      },
    });
    expect(retries.slice(0, 2)).toEqual(['TRANSPORT_NOT_FOUND', 'TRANSPORT_NOT_FOUND']);
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(t.isOpen).toBe(true);
    // The port is the line's: what the device sends arrives.
    const device = line.device(57600);
    await device.open();
    const got = new Promise<Buffer>((r) => t.once('data', r));
    await device.write(Uint8Array.of(0xef, 0x01));
    expect([...(await got)]).toEqual([0xef, 0x01]);
    await t.close();
    await line.close();
  });

  it('gives up after maxAttempts with the last error', async () => {
    const t = new SerialTransport({ path: '/dev/ttyUSB-nope', baud: 57600 });
    const err = await reopenWithBackoff(t, { baseMs: 1, capMs: 2, maxAttempts: 3 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'TRANSPORT_NOT_FOUND')).toBe(true);
  });
});
