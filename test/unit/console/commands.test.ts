/** Commands from the page, over real HTTP on 127.0.0.1 and a real in-process broker: what is refused before sending, and an answer that does not come. */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CONSOLE_COMMANDS, MAX_COMMANDS_IN_FLIGHT, PageCommands } from '../../../src/console/commands.js';
import type { ConsoleContext } from '../../../src/console/console-context.js';
import { ConsoleLogin } from '../../../src/console/login.js';
import { sendError, sendJson } from '../../../src/console/web.js';
import { startAckingBroker } from '../../helpers/broker.js';
import { feedTerminal, testContext } from '../../helpers/console-parts.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A server whose every request is a command; resolves with a function that posts one. */
async function serve(ctx: ConsoleContext) {
  const commands = new PageCommands(ctx);
  const server: Server = createServer((req, res) => {
    commands.run(req).then(
      (r) => sendJson(res, r.status, r.body),
      (err: { status?: number }) => sendError(res, err.status ?? 500, err),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => server.close(r)));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/command`;
  return async (body: unknown, type = 'application/json') => {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': type },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as { error?: { code: string; message: string }; status?: string } };
  };
}

async function withCommands(brokerUrl = 'mqtt://127.0.0.1:1', timeoutMs = 300) {
  const login = await ConsoleLogin.create('long enough secret', 1);
  const ctx = testContext({ url: brokerUrl, login, signer: { key: Buffer.alloc(32, 7), kid: 'site' }, commandTimeoutMs: timeoutMs });
  feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
  return { ctx, post: await serve(ctx) };
}

describe('commands from the page', () => {
  it('are off without a login or an ops key (403)', async () => {
    const post = await serve(testContext());
    const r = await post({ site: 'plant-a', terminal: 'gate-1', command: 'ping' });
    expect([r.status, r.body.error?.code]).toEqual([403, 'CONSOLE_COMMANDS_OFF']);
    expect(r.body.error?.message).toContain('consolePassword');
  });

  it('refuses another type (415), not JSON (400), not a command or bad arguments (400), a terminal never seen (404), a body over 16 KiB (413)', async () => {
    const { post } = await withCommands();
    const cases: Array<[unknown, string | undefined, number, RegExp]> = [
      [{ site: 'plant-a', terminal: 'gate-1', command: 'ping' }, 'text/plain', 415, /as application\/json/],
      ['{"site":', undefined, 400, /not JSON/],
      [{ site: 'plant-a', terminal: 'gate-1', command: 'delete-user' }, undefined, 400, /^not a command: command:/],
      [{ site: 'plant a', terminal: 'gate-1', command: 'ping' }, undefined, 400, /^not a command: site:/],
      [
        { site: 'plant-a', terminal: 'gate-1', command: 'set-log-level', args: { level: 'loud' } },
        undefined,
        400,
        /^bad arguments for set-log-level/,
      ],
      [{ site: 'plant-a', terminal: 'gate-9', command: 'ping' }, undefined, 404, /no terminal plant-a\/gate-9/],
      [{ site: 'plant-a', terminal: 'gate-1', command: 'ping', args: { x: 'y'.repeat(17_000) } }, undefined, 413, /over 16384 bytes/],
    ];
    for (const [body, type, status, message] of cases) {
      const r = await post(body, type);
      expect([r.status, r.body.error?.code], JSON.stringify(body).slice(0, 80)).toEqual([
        status,
        status === 404 ? 'CONSOLE_NOT_FOUND' : 'CONSOLE_BAD_REQUEST',
      ]);
      expect(r.body.error?.message).toMatch(message);
    }
    expect(CONSOLE_COMMANDS).not.toContain('delete-user');
  });

  it('answers 200 with an error result when no answer comes, and lets at most 8 wait at once', async () => {
    const broker = await startAckingBroker();
    cleanup.push(() => broker.stop());
    const { ctx, post } = await withCommands(broker.url, 1500);
    const all = await Promise.all(
      Array.from({ length: MAX_COMMANDS_IN_FLIGHT + 1 }, (_, i) =>
        new Promise((r) => setTimeout(r, i === MAX_COMMANDS_IN_FLIGHT ? 300 : 0)).then(() =>
          post({ site: 'plant-a', terminal: 'gate-1', command: 'ping' }),
        ),
      ),
    );
    const refused = all.filter((r) => r.status === 429);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.body.error?.message).toContain('8 commands are already waiting');
    const waited = all.filter((r) => r.status === 200);
    expect(waited).toHaveLength(MAX_COMMANDS_IN_FLIGHT);
    for (const r of waited)
      expect(r.body).toMatchObject({ status: 'error', transaction: null, command: 'ping', error: { code: expect.any(String) } });
    expect(ctx.health.commandsSent).toBe(MAX_COMMANDS_IN_FLIGHT);
  });
});
