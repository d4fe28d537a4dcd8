/**
 * Live updates to the pages, as Server-Sent Events on `/api/events`: a `snapshot` on connecting,
 * then at most every 500 ms `rows` (the terminals that changed), `remove` (the keys of those
 * gone) and `alerts` (every active alert and the console's state, when they changed); a comment
 * every 15 s keeps proxies from closing the stream. A page whose session ended gets `logout` and
 * is closed; a page that does not read (8 MiB unsent) is dropped, and reconnects to a snapshot.
 */
import type { ServerResponse } from 'node:http';
import type { ConsoleContext, ConsoleFeature } from './console-context.js';
import type { FleetView } from './fleet-view.js';
import { securityHeaders } from './web.js';

export const FLUSH_MS = 500;
export const HEARTBEAT_MS = 15_000;
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

interface LiveClient {
  res: ServerResponse;
  /** The session the page opened the stream with (null without a login). */
  token: string | null;
}

export class LiveUpdates implements ConsoleFeature {
  readonly name = 'live-updates';
  readonly #ctx: ConsoleContext;
  readonly #view: FleetView;
  readonly #clients = new Set<LiveClient>();
  readonly #dirty = new Set<string>();
  readonly #removed = new Set<string>();
  #alertsDirty = true;
  #timers: NodeJS.Timeout[] = [];

  constructor(ctx: ConsoleContext, view: FleetView) {
    this.#ctx = ctx;
    this.#view = view;
    ctx.fleet.on('change', (r) => {
      this.#dirty.add(r.key);
      this.#removed.delete(r.key);
    });
    ctx.fleet.on('remove', (key) => {
      this.#dirty.delete(key);
      this.#removed.add(key);
    });
    ctx.events.on('alerts', (key) => {
      this.#alertsDirty = true;
      if (key !== null) this.#dirty.add(key);
    });
    // The console's state (shown with the alerts) says whether it has the broker.
    ctx.events.on('broker', () => {
      this.#alertsDirty = true;
    });
  }

  /** Pages connected now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** Turns a request into an event stream: the snapshot now, the changes from then on. */
  attach(res: ServerResponse, token: string | null): void {
    res.writeHead(200, {
      ...securityHeaders(),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    const c: LiveClient = { res, token };
    this.#clients.add(c);
    this.#write(c, 'snapshot', this.#view.snapshot());
    res.req.on('close', () => this.#clients.delete(c));
  }

  /** Sends what changed since the last flush (and ends the streams of sessions that ended). */
  flush(now = Date.now()): void {
    const login = this.#ctx.options.login;
    for (const c of this.#clients) {
      if (login && c.token && !login.valid(c.token, now, false)) {
        this.#write(c, 'logout', {});
        c.res.end();
        this.#clients.delete(c);
      }
    }
    if (this.#clients.size === 0) {
      this.#dirty.clear();
      this.#removed.clear();
      this.#alertsDirty = false;
      return;
    }
    if (this.#dirty.size) {
      const rows = this.#view.rows(this.#dirty);
      this.#dirty.clear();
      for (const c of this.#clients) this.#write(c, 'rows', rows);
    }
    if (this.#removed.size) {
      const keys = [...this.#removed];
      this.#removed.clear();
      for (const c of this.#clients) this.#write(c, 'remove', keys);
    }
    if (this.#alertsDirty) {
      this.#alertsDirty = false;
      const payload = { alerts: this.#ctx.book.all(), console: this.#view.state() };
      for (const c of this.#clients) this.#write(c, 'alerts', payload);
    }
  }

  #write(c: LiveClient, event: string, data: unknown): void {
    if (c.res.writableLength > MAX_UNSENT_BYTES) {
      // A page that does not read: drop it (it reconnects and gets a fresh snapshot).
      c.res.destroy();
      this.#clients.delete(c);
      return;
    }
    c.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  start(): void {
    this.#timers = [
      setInterval(() => this.flush(), FLUSH_MS),
      setInterval(() => {
        for (const c of this.#clients) c.res.write(': keep-alive\n\n');
      }, HEARTBEAT_MS),
    ];
  }

  /** Ends every stream. */
  stop(): void {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    for (const c of this.#clients) c.res.end();
    this.#clients.clear();
  }
}
