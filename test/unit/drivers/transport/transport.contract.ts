/**
 * The transport contract (drivers/transport/transport.ts), written once and run against every
 * implementation: the memory pair, the serial transport on a real PTY, the HID transport.
 *
 * A subject is a transport plus a `peer` standing for the device on the other side.
 */
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../../../src/core/errors.js';
import type { ByteTransport } from '../../../../drivers/transport/transport.js';

export interface ContractPeer {
  /** The device sends bytes (or one input report) to the transport. */
  send(data: Uint8Array): Promise<void>;
  /** Resolves with the next `length` bytes the device received (concatenated). */
  receive(length: number, timeoutMs?: number): Promise<Buffer>;
  /** The device goes away (cable pulled, socat killed, HID device removed). */
  unplug(): Promise<void>;
}

export interface ContractSubject {
  transport: ByteTransport;
  peer: ContractPeer;
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** Makes a fresh, unopened transport with its peer. */
  make(): Promise<ContractSubject>;
  /** Makes a transport whose device does not exist (open must reject with TRANSPORT_NOT_FOUND). */
  makeMissing?(): ByteTransport;
  /** Messages to exchange; defaults to a few byte strings. For HID: whole reports. */
  messages?: Uint8Array[];
  /** What the device receives for one `write(message)` (HID strips the report id, say). */
  atPeer?(written: Uint8Array): Uint8Array;
  /** What `data` carries for one `peer.send(message)`. */
  atTransport?(sent: Uint8Array): Uint8Array;
  /** How long the transport may take to notice an unplug (ms). */
  disconnectWithinMs?: number;
}

function collect(transport: ByteTransport, length: number, timeoutMs = 3000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const timer = setTimeout(() => {
      transport.off('data', onData);
      reject(new Error(`only ${got} of ${length} bytes arrived in ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (got >= length) {
        clearTimeout(timer);
        transport.off('data', onData);
        resolve(Buffer.concat(chunks));
      }
    };
    transport.on('data', onData);
  });
}

export function transportContract(name: string, options: ContractOptions): void {
  const messages = options.messages ?? [
    Uint8Array.of(0xef, 0x01, 0xff),
    Uint8Array.from({ length: 300 }, (_, i) => i & 0xff),
    Uint8Array.of(0),
  ];
  const atPeer = options.atPeer ?? ((m: Uint8Array) => m);
  const atTransport = options.atTransport ?? ((m: Uint8Array) => m);
  const within = options.disconnectWithinMs ?? 2000;

  describe(`transport contract: ${name}`, () => {
    it('opens, carries bytes both ways in order, and closes idempotently without a disconnect', async () => {
      const { transport, peer, cleanup } = await options.make();
      try {
        expect(transport.isOpen).toBe(false);
        await transport.open();
        expect(transport.isOpen).toBe(true);
        let disconnects = 0;
        transport.on('disconnect', () => disconnects++);

        const expectedAtPeer = Buffer.concat(messages.map((m) => atPeer(m)));
        const received = peer.receive(expectedAtPeer.length);
        for (const m of messages) await transport.write(m);
        expect([...(await received)]).toEqual([...expectedAtPeer]);

        const expectedHere = Buffer.concat(messages.map((m) => atTransport(m)));
        const arriving = collect(transport, expectedHere.length);
        for (const m of messages) await peer.send(m);
        expect([...(await arriving)]).toEqual([...expectedHere]);

        await transport.close();
        await transport.close();
        expect(transport.isOpen).toBe(false);
        await new Promise((r) => setTimeout(r, 50));
        expect(disconnects).toBe(0);
        const err = await transport.write(Uint8Array.of(1)).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isAgentError(err) && err.code.startsWith('TRANSPORT_')).toBe(true);
      } finally {
        await cleanup();
      }
    });

    it('signals a disconnect once when the device goes away, and later writes reject', async () => {
      const { transport, peer, cleanup } = await options.make();
      try {
        await transport.open();
        const errors: Error[] = [];
        const first = new Promise<Error>((resolve) => transport.once('disconnect', resolve));
        transport.on('disconnect', (e) => errors.push(e));
        const t0 = Date.now();
        await peer.unplug();
        const err = await Promise.race([first, new Promise<null>((r) => setTimeout(() => r(null), within + 1000))]);
        expect(err, `no disconnect within ${within} ms`).not.toBeNull();
        expect(Date.now() - t0).toBeLessThanOrEqual(within + 1000);
        expect(isAgentError(err, 'TRANSPORT_DISCONNECTED')).toBe(true);
        expect(transport.isOpen).toBe(false);
        const w = await transport.write(Uint8Array.of(1, 2, 3)).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isAgentError(w, 'TRANSPORT_DISCONNECTED')).toBe(true);
        await new Promise((r) => setTimeout(r, 100));
        expect(errors).toHaveLength(1);
        await transport.close();
      } finally {
        await cleanup();
      }
    });

    if (options.makeMissing) {
      const makeMissing = options.makeMissing;
      it('rejects open on a missing device with TRANSPORT_NOT_FOUND and a hint', async () => {
        const t = makeMissing();
        const err = await t.open().then(
          () => null,
          (e: unknown) => e,
        );
        expect(isAgentError(err, 'TRANSPORT_NOT_FOUND')).toBe(true);
        expect((err as { hint?: string }).hint).toBeTruthy();
        expect(t.isOpen).toBe(false);
      });
    }
  });
}
