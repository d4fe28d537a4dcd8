/** The composition: the features start in order against a real in-process broker and stop in reverse; a failed start leaves nothing behind. */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CONSOLE_COMMANDS, startConsole } from '../../../src/console/console.js';
import { startAckingBroker } from '../../helpers/broker.js';
import { testContext } from '../../helpers/console-parts.js';
import { until } from '../../helpers/poll.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('startConsole', () => {
  it('connects to the broker, listens, and on stop closes the page and leaves the broker', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const { settings } = testContext();
    const running = await startConsole({
      url: broker.url,
      prefix: 'attendance',
      maxPayloadBytes: 65_536,
      settings,
      port: 0,
      login: null,
      signer: null,
    });
    cleanup.push(() => running.stop());
    expect(running.url).toBe(`http://127.0.0.1:${running.port}/`);
    expect([running.host, running.loginRequired, running.commands.enabled]).toEqual(['127.0.0.1', false, false]);
    await until(
      'connected',
      async () => ((await (await fetch(`${running.url}healthz`)).json()) as { mqttConnected: boolean }).mqttConnected,
    );
    expect(broker.clients()).toBe(1);
    await running.stop();
    await expect(fetch(`${running.url}healthz`)).rejects.toThrow();
    await until('the feed left the broker', () => broker.clients() === 0);
    expect(CONSOLE_COMMANDS).toContain('ping');
  });

  it('stops what it started when a later feature cannot start (the port is taken)', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => taken.close(r)));
    const port = (taken.address() as { port: number }).port;
    const { settings } = testContext();
    await expect(
      startConsole({ url: broker.url, prefix: 'attendance', maxPayloadBytes: 65_536, settings, port, login: null, signer: null }),
    ).rejects.toMatchObject({ code: 'CONSOLE_LISTEN' });
    await new Promise((r) => setTimeout(r, 300));
    expect(broker.clients()).toBe(0);
  });

  it('refuses an unsafe host before connecting to anything', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const { settings } = testContext();
    await expect(
      startConsole({
        url: broker.url,
        prefix: 'attendance',
        maxPayloadBytes: 65_536,
        settings,
        host: '0.0.0.0',
        port: 0,
        login: null,
        signer: null,
      }),
    ).rejects.toMatchObject({ code: 'CONSOLE_UNSAFE_HOST' });
    await new Promise((r) => setTimeout(r, 200));
    expect(broker.clients()).toBe(0);
  });
});
