import { describe, expect, it } from 'vitest';
import { createMemoryPair } from '../../../../drivers/transport/memory-transport.js';
import { R30xSimulator } from '../../../../drivers/r30x/simulator.js';
import { probeR30xTransport } from '../../../../drivers/r30x/probe.js';
import { encodePacket, PacketId } from '../../../../drivers/r30x/codec.js';
import { testImage } from './scanner.contract.js';

async function rig(options: { password?: number; model?: 'R503' | 'AS608' } = {}) {
  const { host, device } = createMemoryPair('probe');
  await device.open();
  await host.open();
  const sim = new R30xSimulator(device, { pacing: false, imageSource: testImage, ...options });
  return { host, device, sim };
}

describe('R30x discovery probe', () => {
  it('identifies model, capacity, templates and firmware', async () => {
    const { host, sim } = await rig();
    sim.enroll(0, 1);
    expect(await probeR30xTransport(host, 57600, 100)).toMatchObject({
      model: 'R503',
      firmware: '1.2',
      capacity: 200,
      templates: 1,
      packetSize: 128,
      passwordRequired: false,
    });
  });

  it('identifies an AS608 (no product info) by its parameters', async () => {
    const { host } = await rig({ model: 'AS608' });
    expect(await probeR30xTransport(host, 57600, 100)).toMatchObject({ model: 'R30x', firmware: null, capacity: 300, templates: 0 });
  });

  it('says an R30x with a password set is there, and that it wants the password', async () => {
    const { host } = await rig({ password: 1234 });
    expect(await probeR30xTransport(host, 57600, 100)).toMatchObject({
      model: 'R30x (password set)',
      capacity: null,
      passwordRequired: true,
    });
    const { host: h2 } = await rig({ password: 1234 });
    expect(await probeR30xTransport(h2, 57600, 100, 1234)).toMatchObject({ model: 'R503', capacity: 200, passwordRequired: false });
  });

  it('answers null for a silent line and for a device speaking something else', async () => {
    const silent = createMemoryPair('silent');
    await silent.host.open();
    await silent.device.open();
    expect(await probeR30xTransport(silent.host, 57600, 50)).toBeNull();
    const other = createMemoryPair('other');
    await other.host.open();
    await other.device.open();
    other.device.on('data', () => void other.device.write(Buffer.from([0x55, 0xaa, 0x01, 0x00, 0, 0, 0, 0, 0x30, 0, 0x30, 0x01])));
    expect(await probeR30xTransport(other.host, 57600, 50)).toBeNull();
    // An R30x-framed but meaningless answer is not taken for a module either.
    const odd = createMemoryPair('odd');
    await odd.host.open();
    await odd.device.open();
    odd.device.on('data', () => void odd.device.write(encodePacket({ pid: PacketId.ack, payload: Uint8Array.of(0, 1) })));
    expect(await probeR30xTransport(odd.host, 57600, 50)).toBeNull();
  });
});
