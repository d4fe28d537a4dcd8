import { describe, expect, it } from 'vitest';
import { createMemoryPair } from '../../../../drivers/transport/memory-transport.js';
import { transportContract } from './transport.contract.js';
import { isAgentError } from '../../../../src/core/errors.js';

transportContract('memory pair', {
  async make() {
    const { host, device } = createMemoryPair('contract');
    await device.open();
    const inbox: Buffer[] = [];
    let waiter: (() => void) | undefined;
    device.on('data', (d) => {
      inbox.push(d);
      waiter?.();
    });
    return {
      transport: host,
      peer: {
        send: (d) => device.write(d),
        async receive(length, timeoutMs = 2000) {
          const deadline = Date.now() + timeoutMs;
          while (Buffer.concat(inbox).length < length) {
            if (Date.now() > deadline) throw new Error('peer receive timed out');
            await new Promise<void>((r) => {
              waiter = r;
              setTimeout(r, 20);
            });
          }
          const all = Buffer.concat(inbox.splice(0));
          return all.subarray(0, length);
        },
        unplug: () => device.close(),
      },
      cleanup: async () => {
        await host.close();
        await device.close();
      },
    };
  },
});

describe('memory pair', () => {
  it('holds bytes written before the other end opens and delivers them on open', async () => {
    const { host, device } = createMemoryPair();
    await device.open();
    await device.write(Uint8Array.of(1, 2));
    const got = new Promise<Buffer>((r) => host.once('data', r));
    await host.open();
    expect([...(await got)]).toEqual([1, 2]);
  });

  it('refuses to reopen an end whose peer went away', async () => {
    const { host, device } = createMemoryPair();
    await host.open();
    await device.open();
    await device.close();
    await new Promise((r) => setImmediate(r));
    const err = await host.open().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'TRANSPORT_DISCONNECTED')).toBe(true);
  });
});
