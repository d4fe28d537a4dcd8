// The exchange state machine against a scripted device on the memory pair: no simulator logic,
// just the bytes a module (or a broken one) would send.
import { describe, expect, it } from 'vitest';
import { createMemoryPair, type MemoryTransport } from '../../../../drivers/transport/memory-transport.js';
import { R30xDriver } from '../../../../drivers/r30x/driver.js';
import { PacketId, encodeDataPackets, encodePacket } from '../../../../drivers/r30x/codec.js';
import { R30xParser } from '../../../../drivers/r30x/parser.js';
import { CONFIRMATION_CODES, statusError } from '../../../../drivers/r30x/protocol.js';
import { R30xSimulator } from '../../../../drivers/r30x/simulator.js';
import { R30xScanner } from '../../../../drivers/r30x/scanner.js';
import { isAgentError } from '../../../../src/core/errors.js';
import { testImage } from './scanner.contract.js';

type Reply = (instruction: number, attempt: number) => Buffer | null;

async function scripted(reply: Reply): Promise<{ driver: R30xDriver; device: MemoryTransport; commands: number[] }> {
  const { host, device } = createMemoryPair('scripted');
  await device.open();
  await host.open();
  const parser = new R30xParser();
  const commands: number[] = [];
  device.on('data', (chunk) => {
    for (const r of parser.push(chunk)) {
      if (!r.ok || r.packet.pid !== PacketId.command) continue;
      const instr = r.packet.payload[0]!;
      commands.push(instr);
      const out = reply(instr, commands.filter((c) => c === instr).length);
      if (out) void device.write(out);
    }
  });
  return { driver: new R30xDriver(host, { timeoutMs: 60, retries: 2, baud: 115200 }), device, commands };
}

const ack = (code: number, params: number[] = [], address = 0xffffffff) =>
  encodePacket({ address, pid: PacketId.ack, payload: Uint8Array.of(code, ...params) });

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  return isAgentError(e) ? e.code : undefined;
}

describe('R30x exchange state machine', () => {
  it('retries a command that got no answer, then succeeds', async () => {
    const { driver, commands } = await scripted((_i, attempt) => (attempt < 3 ? null : ack(0, [0, 7])));
    expect(await driver.templateCount()).toBe(7);
    expect(commands).toHaveLength(3);
  });

  it('gives DRIVER_TIMEOUT naming the command after the retries', async () => {
    const { driver, commands } = await scripted(() => null);
    const err = await driver.templateCount().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'DRIVER_TIMEOUT')).toBe(true);
    expect((err as Error).message).toContain('TemplateNum');
    expect(commands).toHaveLength(3);
  });

  it('keeps a bounded number of packets a module sends when nobody asked, and works on', async () => {
    const { driver, device } = await scripted(() => ack(0, [0, 4]));
    // 20,000 unasked-for acknowledgements in one burst (about 240 KB).
    await device.write(Buffer.concat(Array.from({ length: 20_000 }, () => ack(0, [0, 1]))));
    await new Promise((r) => setImmediate(r));
    expect(driver.waiting).toBeGreaterThan(0);
    expect(driver.waiting).toBeLessThanOrEqual(4096);
    expect(await driver.templateCount()).toBe(4);
  });

  it('ignores answers from another module address and garbage around the answer', async () => {
    const { driver } = await scripted(() =>
      Buffer.concat([Buffer.from([1, 2, 0xef]), ack(0, [0, 1], 0x12345678), Buffer.from('noise'), ack(0, [0, 9])]),
    );
    expect(await driver.templateCount()).toBe(9);
  });

  it('retries on "packet receive error" (0x01) but not on a real refusal', async () => {
    const a = await scripted((_i, attempt) => (attempt === 1 ? ack(0x01) : ack(0, [0, 2])));
    expect(await a.driver.templateCount()).toBe(2);
    expect(a.commands).toHaveLength(2);
    const b = await scripted(() => ack(0x0b));
    expect(await codeOf(b.driver.loadChar(1, 5000))).toBe('DRIVER_R30X_BAD_LOCATION');
    expect(b.commands).toHaveLength(1);
  });

  it('reports a module that stops in the middle of a data transfer, with how far it got', async () => {
    const { driver } = await scripted((i) =>
      i === 0x08 ? Buffer.concat([ack(0), encodeDataPackets(new Uint8Array(512), 128).subarray(0, 139 * 2)]) : null,
    );
    const err = await driver.upChar(1).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'DRIVER_TIMEOUT')).toBe(true);
    expect((err as Error).message).toMatch(/after 256 of 512 bytes/);
  });

  it('serializes exchanges: a second command waits for the first answer', async () => {
    const { driver, commands } = await scripted((i) => (i === 0x1d ? ack(0, [0, 3]) : ack(0)));
    const [n] = await Promise.all([driver.templateCount(), driver.empty(), driver.regModel()]);
    expect(n).toBe(3);
    expect(commands).toEqual([0x1d, 0x0d, 0x05]);
  });

  it('fails at once with TRANSPORT_DISCONNECTED when the device goes away mid-exchange', async () => {
    const { driver, device } = await scripted(() => null);
    const pending = driver.templateCount();
    setTimeout(() => void device.close(), 10);
    expect(await codeOf(pending)).toBe('TRANSPORT_DISCONNECTED');
  });

  it('names every confirmation code and keeps the device number in the context', () => {
    for (const [code, info] of CONFIRMATION_CODES) {
      const e = statusError(code, 0x04);
      expect(e.code).toBe(`DRIVER_R30X_${info.name}`);
      expect(e.context).toMatchObject({ deviceCode: code, deviceName: info.name, instruction: 'Search' });
      expect(e.hint).toBeTruthy();
    }
    expect(statusError(0x77, 0x01).code).toBe('DRIVER_R30X_UNKNOWN_STATUS');
    expect(statusError(0x77, 0x01).context.deviceName).toBe('UNKNOWN_0x77');
  });
});

describe('R30x in-process, paced', () => {
  it('unplugging in the middle of UpImage gives TRANSPORT_DISCONNECTED and a scanner disconnect event', async () => {
    const { host, device } = createMemoryPair('unplug');
    await device.open();
    const sim = new R30xSimulator(device, { baud: 115200, pacing: true, imageSource: testImage });
    const scanner = new R30xScanner(host, { baud: 115200, timeoutMs: 10_000 });
    await scanner.open();
    sim.present(1);
    await scanner.driver.genImg();
    let got = 0;
    host.on('data', (d) => {
      got += d.length;
      if (got > 4000 && got - d.length <= 4000) sim.setFault('unplug', true);
    });
    const events: Error[] = [];
    scanner.on('disconnect', (e) => events.push(e));
    const err = await scanner.captureImage().then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAgentError(err, 'TRANSPORT_DISCONNECTED')).toBe(true);
    expect(got).toBeLessThan(20_000);
    expect(events).toHaveLength(1);
    expect(() => sim.setFault('warp', true)).toThrow(/unknown R30x simulator fault "warp"/);
  });
});
