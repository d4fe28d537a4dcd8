import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionGuard, maxHeldFor, type RefusedConnection } from '../../../src/server/connection-guard.js';
import { until } from '../../helpers/poll.js';

const LIMITS = { maxConnections: 6, perAddress: 2, requestsPerAddress: 2, refusalDelayMs: 200, maxHeld: 2 };

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const srv of servers.splice(0)) await new Promise((r) => srv.close(r));
});

/** A real HTTP server on 127.0.0.1 behind `guard`, answering every request 204. */
async function served(guard: ConnectionGuard): Promise<number> {
  const srv = createServer((_req, res) => res.writeHead(204).end());
  guard.attach(srv);
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return (srv.address() as { port: number }).port;
}

/** A raw connection from `from`; collects what the server sends and when it closes. */
function open(port: number, from: string) {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  sockets.push(s);
  const seen = { text: '', closed: false };
  s.on('data', (d: Buffer) => (seen.text += d.toString('latin1')));
  s.on('error', () => undefined);
  s.on('close', () => (seen.closed = true));
  return { socket: s, seen, connected: new Promise<void>((r) => s.once('connect', () => r())) };
}

describe('the connection guard', () => {
  it('holds the connections over an address share, then answers them 503 with Retry-After; other addresses and requests pass', async () => {
    const refused: RefusedConnection[] = [];
    const guard = new ConnectionGuard(LIMITS, (r) => refused.push(r));
    const port = await served(guard);
    const mine = [open(port, '127.0.0.2'), open(port, '127.0.0.2')];
    await Promise.all(mine.map((c) => c.connected));
    await until('both admitted', () => guard.connections.open === 2);
    const over = open(port, '127.0.0.2');
    await until('the third held', () => guard.connections.held === 1);
    over.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'); // never parsed
    const other = open(port, '127.0.0.3');
    other.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until('the other address served', () => other.seen.text.startsWith('HTTP/1.1 204'));
    expect(over.seen.text).toBe('');
    await until('the held one answered and closed', () => over.seen.closed, 2000);
    expect(over.seen.text).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\nRetry-After: 1\r\n/);
    expect(over.seen.text).toContain('"statusDescription":"too many connections from this address (at most 2 at once)');
    expect(refused).toEqual([{ kind: 'held', address: '127.0.0.2' }]);
    expect(guard.refused).toMatchObject({ held: 1, dropped: 0 });
  });

  it('holds a connection longer the more its address holds already: one delay more per share held; another address waits one', async () => {
    const guard = new ConnectionGuard({ ...LIMITS, maxConnections: 10, refusalDelayMs: 150, maxHeld: 10 });
    const port = await served(guard);
    const full = ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3'];
    await Promise.all(full.map((from) => open(port, from).connected));
    await until('both addresses at their share', () => guard.connections.open === 4);
    const t0 = performance.now();
    const answeredAt: number[] = [];
    const held = Array.from({ length: 5 }, (_, i) => {
      const c = open(port, '127.0.0.2');
      c.socket.on('close', () => (answeredAt[i] = performance.now() - t0));
      return c;
    });
    await until('five held', () => guard.connections.held === 5);
    const other = open(port, '127.0.0.3');
    let otherAt = 0;
    other.socket.on('close', () => (otherAt = performance.now() - t0));
    await until('all answered', () => held.every((c) => c.seen.closed) && other.seen.closed, 5000);
    for (const c of [...held, other]) expect(c.seen.text).toMatch(/^HTTP\/1\.1 503 /);
    // Two held (the share is 2): 150 ms each; the next two 300 ms; the fifth 450 ms.
    expect(answeredAt[0]).toBeGreaterThanOrEqual(140);
    expect(Math.min(answeredAt[2]!, answeredAt[3]!)).toBeGreaterThanOrEqual(290);
    expect(answeredAt[4]).toBeGreaterThanOrEqual(440);
    // 127.0.0.3 held nothing before: its one delay, not 127.0.0.2's.
    expect(otherAt).toBeLessThan(answeredAt[4]!);
    expect(guard.connections).toMatchObject({ open: 4, held: 0, addresses: 2 });
  });

  it('closes at once what is over the cap in all, and refused connections past the held bound', async () => {
    const guard = new ConnectionGuard({ ...LIMITS, maxConnections: 2, perAddress: 1, maxHeld: 1 });
    const port = await served(guard);
    await open(port, '127.0.0.2').connected;
    await until('admitted', () => guard.connections.open === 1);
    open(port, '127.0.0.2'); // held
    await until('held', () => guard.connections.held === 1);
    const past = open(port, '127.0.0.2'); // over the address share, none more may be held
    await until('closed at once', () => past.seen.closed, 1000);
    expect(past.seen.text).toBe('');
    await open(port, '127.0.0.3').connected;
    await until('the cap in all reached', () => guard.connections.open === 2);
    // (With one still held, node's own cap, the admitted and the held together, would close it first.)
    await until('the held one answered', () => guard.connections.held === 0, 2000);
    const capped = open(port, '127.0.0.4');
    await until('closed at once', () => capped.seen.closed, 1000);
    expect(guard.refused).toMatchObject({ held: 1, dropped: 2 });
  });

  it('counts requests in flight per address and forgets an address with nothing open', () => {
    const guard = new ConnectionGuard(LIMITS);
    const a = guard.beginRequest('127.0.0.2');
    const b = guard.beginRequest('::ffff:127.0.0.2');
    expect(guard.beginRequest('127.0.0.2')).toBeNull();
    const c = guard.beginRequest('2001:db8:1:2::7');
    expect(guard.beginRequest('2001:db8:1:2:ffff::1')).not.toBeNull(); // the same /64: its second
    expect(guard.beginRequest('2001:db8:1:2::9')).toBeNull();
    expect(guard.refused.requests).toBe(2);
    a!();
    a!(); // once only
    expect(guard.beginRequest('127.0.0.2')).not.toBeNull();
    expect(guard.beginRequest('127.0.0.2')).toBeNull();
    expect(guard.connections.addresses).toBe(2);
    b!();
    c!();
    expect(guard.connections.addresses).toBe(2);
  });

  it('holds as many refused connections as the limit of open files leaves room for', () => {
    expect(maxHeldFor(512, 1024)).toBe(384);
    expect(maxHeldFor(512, 20_000)).toBe(1024);
    expect(maxHeldFor(512, null)).toBe(1024);
    expect(maxHeldFor(512, 600)).toBe(0);
  });
});
