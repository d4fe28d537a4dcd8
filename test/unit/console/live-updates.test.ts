/** Live updates over real HTTP on 127.0.0.1: the snapshot, then rows, removals, alerts and logout as server-sent events. */
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleContext } from '../../../src/console/console-context.js';
import { FleetView } from '../../../src/console/fleet-view.js';
import { LiveUpdates } from '../../../src/console/live-updates.js';
import { ConsoleLogin } from '../../../src/console/login.js';
import { feedTerminal, testContext } from '../../helpers/console-parts.js';
import { until } from '../../helpers/poll.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Stream {
  events: Array<{ event: string; data: unknown }>;
  text: () => string;
  ended: () => boolean;
  res: IncomingMessage;
}

async function serve(ctx: ConsoleContext, token: string | null = null): Promise<{ live: LiveUpdates; open: () => Promise<Stream> }> {
  const live = new LiveUpdates(ctx, new FleetView(ctx));
  const server: Server = createServer((_req, res) => live.attach(res, token));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () => new Promise((r) => server.close(r)),
    () => server.closeAllConnections(),
    () => live.stop(),
  );
  const port = (server.address() as { port: number }).port;
  const open = () =>
    new Promise<Stream>((resolve) => {
      get({ host: '127.0.0.1', port, path: '/api/events' }, (res) => {
        let text = '';
        let ended = false;
        const events: Stream['events'] = [];
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          for (const block of c.split('\n\n')) {
            const m = /^event: (\S+)\ndata: (.*)$/s.exec(block);
            if (m) events.push({ event: m[1]!, data: JSON.parse(m[2]!) });
          }
        });
        res.on('end', () => (ended = true));
        res.on('close', () => (ended = true));
        resolve({ events, text: () => text, ended: () => ended, res });
      });
    });
  return { live, open };
}

describe('live updates', () => {
  it('sends a snapshot, then the rows that changed, the keys removed and the alerts, at each flush', async () => {
    const ctx = testContext();
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    const { live, open } = await serve(ctx);
    const s = await open();
    await until('the snapshot', () => s.events.length === 1);
    expect(s.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(s.text().startsWith('retry: 2000\n\n')).toBe(true);
    const snapshot = s.events[0]! as { event: string; data: { terminals: Array<{ key: string }> } };
    expect([snapshot.event, snapshot.data.terminals.map((t) => t.key)]).toEqual(['snapshot', ['plant-a/gate-1']]);
    expect(live.clients).toBe(1);
    live.flush(); // the alerts of the console's first state
    feedTerminal(ctx, 'plant-a', 'gate-2', { state: 'online' });
    feedTerminal(ctx, 'plant-a', 'gate-2', { state: 'degraded' });
    ctx.fleet.apply('attendance/plant-a/gate-1/state', Buffer.alloc(0), false);
    live.flush();
    await until('rows and remove', () => s.events.some((e) => e.event === 'remove'));
    const after = s.events.slice(1).map((e) => e.event);
    expect(after).toEqual(['alerts', 'rows', 'remove']);
    const rows = s.events.find((e) => e.event === 'rows')!.data as Array<{ key: string; state: string }>;
    expect(rows.map((r) => [r.key, r.state])).toEqual([['plant-a/gate-2', 'degraded']]);
    expect(s.events.find((e) => e.event === 'remove')!.data).toEqual(['plant-a/gate-1']);
    ctx.events.brokerChanged(true);
    live.flush();
    await until('alerts again', () => s.events.filter((e) => e.event === 'alerts').length === 2);
    live.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.events.filter((e) => e.event === 'alerts')).toHaveLength(2);
  });

  it('forgets what changed while no page listens (a page starts from a snapshot)', async () => {
    const ctx = testContext();
    const { live, open } = await serve(ctx);
    feedTerminal(ctx, 'plant-a', 'gate-1', { state: 'online' });
    live.flush();
    const s = await open();
    live.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.events.map((e) => e.event)).toEqual(['snapshot']);
  });

  it('tells a page whose session ended to log in again and closes its stream; stop ends every stream', async () => {
    const login = (await ConsoleLogin.create('long enough secret', 1))!;
    const ok = await login.login('long enough secret', '127.0.0.1');
    const token = (ok as { token: string }).token;
    const ctx = testContext({ login });
    const { live, open } = await serve(ctx, token);
    const s = await open();
    await until('the snapshot', () => s.events.length === 1);
    live.flush();
    expect(s.ended()).toBe(false);
    login.logout(token);
    live.flush();
    await until('logout', () => s.events.some((e) => e.event === 'logout') && s.ended());
    expect(live.clients).toBe(0);
    const other = await serve(testContext());
    const s2 = await other.open();
    await until('the snapshot', () => s2.events.length === 1);
    other.live.stop();
    await until('ended', () => s2.ended());
  });
});
