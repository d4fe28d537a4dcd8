// The HID transport against the transport contract, on an in-process device behind node-hid's
// HIDAsync shape (this kernel has no /dev/uhid), and with the real node-hid for open errors.
import { EventEmitter } from 'node:events';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HidTransport, hidOpenError, type HidDeviceHandle } from '../../../../drivers/transport/hid-transport.js';
import { isAgentError } from '../../../../src/core/errors.js';
import { transportContract } from './transport.contract.js';

/** A device with node-hid's HIDAsync interface: reports in and out, feature reports, removal. */
class FakeHidDevice extends EventEmitter implements HidDeviceHandle {
  outReports: Buffer[] = [];
  featuresSent: Buffer[] = [];
  features = new Map<number, Buffer>();
  removed = false;
  closed = false;

  async write(values: number[] | Buffer): Promise<number> {
    if (this.removed) throw new Error('Cannot write to hid device');
    const b = Buffer.from(values);
    this.outReports.push(b);
    this.emit('out', b);
    return b.length;
  }

  async sendFeatureReport(data: number[] | Buffer): Promise<number> {
    if (this.removed) throw new Error('could not send feature report to device');
    const b = Buffer.from(data);
    this.featuresSent.push(b);
    return b.length;
  }

  async getFeatureReport(reportId: number, length: number): Promise<Buffer> {
    if (this.removed) throw new Error('could not get feature report from device');
    const f = this.features.get(reportId) ?? Buffer.from([reportId]);
    return Buffer.concat([f, Buffer.alloc(Math.max(0, length - f.length))]).subarray(0, length);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The device sends one input report (id first). */
  input(report: Uint8Array): void {
    setImmediate(() => this.emit('data', Buffer.from(report)));
  }

  /** Pulled out: node-hid's read loop fails. */
  remove(): void {
    this.removed = true;
    setImmediate(() => this.emit('error', new Error('could not read from HID device')));
  }
}

const REPORT = 0x10;
const reports = [
  Uint8Array.from([REPORT, 1, 2, 3]),
  Uint8Array.from({ length: 64 }, (_, i) => (i === 0 ? REPORT : i)),
  Uint8Array.of(REPORT, 0),
];

transportContract('HID on an in-process device', {
  async make() {
    const device = new FakeHidDevice();
    const inbox: Buffer[] = [];
    device.on('out', (b: Buffer) => inbox.push(b));
    return {
      transport: new HidTransport({ path: 'sim:iris', open: async () => device }),
      peer: {
        send: async (d) => device.input(d),
        async receive(length, timeoutMs = 2000) {
          const deadline = Date.now() + timeoutMs;
          while (Buffer.concat(inbox).length < length) {
            if (Date.now() > deadline) throw new Error('peer receive timed out');
            await new Promise((r) => setTimeout(r, 5));
          }
          return Buffer.concat(inbox.splice(0)).subarray(0, length);
        },
        unplug: async () => device.remove(),
      },
      cleanup: async () => undefined,
    };
  },
  makeMissing: () => new HidTransport({ path: '/dev/hidraw-does-not-exist' }),
  messages: reports,
  // node-hid hands the whole output report, id included, to the device.
  atPeer: (m) => m,
  // `data` carries an input report without its id.
  atTransport: (m) => m.subarray(1),
  disconnectWithinMs: 200,
});

describe('HID transport', () => {
  it('sends and reads feature reports with their id', async () => {
    const device = new FakeHidDevice();
    device.features.set(0x02, Buffer.from([0x02, 0xaa, 0xbb]));
    const t = new HidTransport({ path: 'sim:1', open: async () => device });
    await t.open();
    await t.sendFeatureReport(Uint8Array.of(0x01, 9, 8));
    expect(device.featuresSent).toEqual([Buffer.from([0x01, 9, 8])]);
    const f = await t.getFeatureReport(0x02, 4);
    expect([...f]).toEqual([0x02, 0xaa, 0xbb, 0]);
    await t.close();
    expect(device.closed).toBe(true);
    await expect(t.getFeatureReport(2, 4)).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
  });

  it('keeps only input reports with the expected id', async () => {
    const device = new FakeHidDevice();
    const t = new HidTransport({ path: 'sim:2', open: async () => device, inputReportId: 0x10 });
    await t.open();
    const got: number[][] = [];
    t.on('data', (d) => got.push([...d]));
    device.input(Uint8Array.of(0x11, 1));
    device.input(Uint8Array.of(0x10, 2));
    await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([[2]]);
    await t.close();
  });

  it('passes unnumbered reports whole', async () => {
    const device = new FakeHidDevice();
    const t = new HidTransport({ path: 'sim:3', open: async () => device, numberedReports: false });
    await t.open();
    const got = new Promise<Buffer>((r) => t.once('data', r));
    device.input(Uint8Array.of(7, 8, 9));
    expect([...(await got)]).toEqual([7, 8, 9]);
    await t.close();
  });

  it('fails a call on a removed device with TRANSPORT_DISCONNECTED and one disconnect', async () => {
    const device = new FakeHidDevice();
    const t = new HidTransport({ path: 'sim:4', open: async () => device });
    await t.open();
    const gone = new Promise<Error>((r) => t.once('disconnect', r));
    device.remove();
    await expect(t.sendFeatureReport(Uint8Array.of(1))).rejects.toMatchObject({ code: 'TRANSPORT_DISCONNECTED' });
    expect(isAgentError(await gone, 'TRANSPORT_DISCONNECTED')).toBe(true);
    expect(t.isOpen).toBe(false);
  });

  it('reports a refused feature report on a present device as TRANSPORT_IO, not a disconnect', async () => {
    const device = new FakeHidDevice();
    const t = new HidTransport({ path: 'sim:5', open: async () => device });
    await t.open();
    let disconnects = 0;
    t.on('disconnect', () => disconnects++);
    device.getFeatureReport = async () => {
      throw new Error('could not get feature report from device');
    };
    await expect(t.getFeatureReport(0x09, 64)).rejects.toMatchObject({ code: 'TRANSPORT_IO', retryable: true });
    expect(t.isOpen).toBe(true);
    expect(disconnects).toBe(0);
    await t.close();
  });

  it('maps open failures to typed errors with a hint', () => {
    expect(hidOpenError('/dev/hidraw-nope', new Error('cannot open device with path /dev/hidraw-nope')).code).toBe('TRANSPORT_NOT_FOUND');
    const perm = hidOpenError('/dev/null', new Error('cannot open device with path /dev/null'));
    expect(perm.code).toBe('TRANSPORT_PERMISSION');
    expect(perm.hint).toMatch(/udev/);
    expect(hidOpenError('1-1.2:1.0', new Error('weird')).code).toBe('TRANSPORT_OPEN_FAILED');
    expect(hidOpenError('/dev/null', new Error('Device or resource busy')).code).toBe('TRANSPORT_BUSY');
  });
});

// hidraw lets a second process open the camera and take some of its reports: the transport
// refuses a device another process holds. A file under /dev/shm held by a child stands in for
// /dev/hidraw0 held by the running agent (the opener is the seam, and would succeed).
describe.skipIf(!existsSync('/dev/shm'))('a HID device another process holds (needs /dev/shm)', () => {
  it('is TRANSPORT_BUSY naming the holder, and opens once it is free', async () => {
    const path = join('/dev/shm', `edge-agent-hid-${process.pid}-${Date.now()}`);
    writeFileSync(path, '');
    const holder = spawn('sh', ['-c', `exec sleep 60 < '${path}'`], { stdio: 'ignore' });
    try {
      // Until the shell has exec'd sleep with the file open.
      for (let i = 0; i < 200 && !readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8').startsWith('sleep'); i++)
        await new Promise((r) => setTimeout(r, 25));
      const device = new EventEmitter() as unknown as HidDeviceHandle;
      Object.assign(device, { close: async () => undefined });
      const t = new HidTransport({ path, open: async () => device });
      const err = await t.open().then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentError(err, 'TRANSPORT_BUSY')).toBe(true);
      expect((err as Error).message).toBe(`HID device ${path} is in use by another program: pid ${holder.pid} (sleep 60) holds it`);
      expect(t.isOpen).toBe(false);
      holder.kill();
      await new Promise((r) => holder.once('exit', r));
      await t.open();
      expect(t.isOpen).toBe(true);
      await t.close();
    } finally {
      holder.kill();
      rmSync(path, { force: true });
    }
  });
});
