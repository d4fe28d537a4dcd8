/**
 * The console's HTTP(S) server and its routes:
 *
 * | route | login | what |
 * |---|---|---|
 * | `GET /`, `GET /assets/*` | yes (`/` redirects to `/login`) | the page and its files |
 * | `GET /metrics` | no | Prometheus text (prometheus.ts) |
 * | `GET /healthz` | no | `{ok, mqttConnected, terminals}` |
 * | `GET, POST /login`, `POST /logout` | no | the login (login.ts) |
 * | `GET /api/fleet`, `GET /api/terminal?key=` | yes | the snapshot, a terminal's page (fleet-view.ts) |
 * | `GET /api/events` | yes | live updates (live-updates.ts) |
 * | `POST /api/command` | yes | a signed command (commands.ts) |
 *
 * Every answer carries the security headers; a request must name the console's own host (a
 * loopback console answers only to loopback names), a POST must come from its own origin, and
 * errors are `{"error": {code, message, hint}}` (web.ts). Listening beyond loopback needs a login.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { PageCommands } from './commands.js';
import type { ConsoleContext, ConsoleFeature } from './console-context.js';
import { stateSince } from './console-fleet.js';
import type { FleetView } from './fleet-view.js';
import type { LiveUpdates } from './live-updates.js';
import { ThrottledLog } from '../ops/throttled-log.js';
import { clearedCookie, cookieValue, DEVICE_COOKIE, knownBrowserCookie, type LoginLimit, SESSION_COOKIE, sessionCookie } from './login.js';
import { ConsoleMetrics } from './prometheus.js';
import {
  type Asset,
  escapeHtml,
  fail,
  hostAllowed,
  isLoopback,
  loadAssets,
  originAllowed,
  readBody,
  send,
  sendAsset,
  sendError,
  sendJson,
} from './web.js';

const log = logger('console');

/** What a throttled login is told, by the limit that refused it. */
const THROTTLED: Record<LoginLimit, string> = {
  address: 'Too many failed attempts from this address: wait a minute.',
  browser: 'Too many failed attempts from this browser: wait a minute.',
  account:
    'Too many failed logins to this console from elsewhere: wait, or log in from a browser that has logged in here before (it is not held by this limit).',
  busy: 'The console is checking other passwords: try again in a moment.',
};

export interface ConsoleHttpParts {
  view: FleetView;
  live: LiveUpdates;
  commands: PageCommands;
}

export class ConsoleHttp implements ConsoleFeature {
  readonly name = 'http';
  readonly host: string;
  readonly secure: boolean;
  readonly #ctx: ConsoleContext;
  readonly #parts: ConsoleHttpParts;
  readonly #requestedPort: number;
  readonly #assets: Map<string, Asset>;
  readonly #tls: { cert: Buffer; key: Buffer } | null;
  readonly #metrics = new ConsoleMetrics();
  /** Refused logins are an attacker's to multiply: at most 10 lines per 10 s, then counted. */
  readonly #refusedLogins = new ThrottledLog(log);
  #server: Server | null = null;

  /** Checks what can be checked before anything listens: a login beyond loopback, the page's files, TLS. */
  constructor(ctx: ConsoleContext, parts: ConsoleHttpParts, where: { host: string; port: number }) {
    this.#ctx = ctx;
    this.#parts = parts;
    this.host = where.host;
    this.#requestedPort = where.port;
    if (!isLoopback(this.host) && !ctx.options.login) {
      throw new AgentError(
        'CONSOLE_UNSAFE_HOST',
        `the console would listen on ${this.host} without a login: anyone who reaches it would see the fleet`,
        { host: this.host },
      );
    }
    this.#assets = loadAssets();
    this.secure = ctx.settings.tls !== null;
    this.#tls = ctx.settings.tls ? readTls(ctx.settings.tls) : null;
  }

  /** The port listened on (the one asked for until started). */
  get port(): number {
    return this.#server ? (this.#server.address() as AddressInfo).port : this.#requestedPort;
  }

  /** `http://127.0.0.1:8470/` */
  get url(): string {
    const shownHost = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `${this.secure ? 'https' : 'http'}://${shownHost}:${this.port}/`;
  }

  async start(): Promise<void> {
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      this.#handle(req, res).catch((err: unknown) => {
        const status = (err as { status?: number }).status ?? 500;
        if (status === 500) log.error({ err: toAgentError(err).toJSON() }, 'console request failed');
        sendError(res, status, err);
      });
    };
    const server: Server = this.#tls ? createHttpsServer(this.#tls, onRequest) : createHttpServer(onRequest);
    server.headersTimeout = 20_000;
    server.requestTimeout = 30_000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.#requestedPort, this.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      throw new AgentError(
        'CONSOLE_LISTEN',
        `the console cannot listen on ${this.host}:${this.#requestedPort}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { host: this.host, port: this.#requestedPort },
        { cause: err },
      );
    }
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  #sessionOf(req: IncomingMessage): string | null {
    return cookieValue(req.headers.cookie, SESSION_COOKIE);
  }

  #loginPage(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    const html = this.#assets
      .get('login.html')!
      .body.toString('utf8')
      .replace('{{message}}', message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');
    send(res, status, html, 'text/html; charset=utf-8', headers);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { health, options: o, settings, fleet, book } = this.#ctx;
    const { view, live, commands } = this.#parts;
    health.httpRequests++;
    if (!hostAllowed(this.host, req.headers.host)) {
      send(
        res,
        421,
        'this console answers only to its own address (loopback): open it as http://127.0.0.1:PORT/ or http://localhost:PORT/\n',
        'text/plain; charset=utf-8',
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'POST' && !originAllowed(req, this.secure, settings.allowedOrigins)) {
      throw fail(
        403,
        'CONSOLE_FORBIDDEN_ORIGIN',
        `a POST from ${JSON.stringify((req.headers.origin ?? '(no Origin header)').slice(0, 100))} is not from this console`,
      );
    }
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST')
      throw fail(405, 'CONSOLE_BAD_REQUEST', `${method} is not answered here`);

    if (path.startsWith('/assets/') && method === 'GET') {
      const asset = this.#assets.get(path.slice('/assets/'.length));
      if (!asset || path.endsWith('.html')) throw fail(404, 'CONSOLE_NOT_FOUND', `no file ${path}`);
      return sendAsset(req, res, asset);
    }
    if (path === '/metrics' && method === 'GET') {
      const body = await this.#metrics.render(
        fleet.records().map((r) => ({ row: r.row, stateSince: stateSince(r).at, alerts: book.count(r.site, r.terminal) })),
        { ...health, sseClients: live.clients },
        book.all(),
        Date.now(),
      );
      return send(res, 200, body, this.#metrics.contentType);
    }
    if (path === '/healthz' && method === 'GET')
      return sendJson(res, 200, { ok: true, mqttConnected: health.mqttConnected, terminals: fleet.size });
    if (path === '/login') return this.#login(req, res, url, method);
    if (path === '/logout' && method === 'POST') {
      o.login?.logout(this.#sessionOf(req));
      return send(res, 303, '', 'text/plain', { Location: o.login ? '/login' : '/', 'Set-Cookie': clearedCookie(this.secure) });
    }
    if (o.login && !o.login.valid(this.#sessionOf(req))) {
      if (path === '/' && method === 'GET') return send(res, 303, '', 'text/plain', { Location: '/login' });
      throw fail(401, 'CONSOLE_LOGIN_REQUIRED', 'log in first');
    }
    if (path === '/' && method === 'GET') return sendAsset(req, res, this.#assets.get('index.html')!);
    if (path === '/api/fleet' && method === 'GET') return sendJson(res, 200, view.snapshot());
    if (path === '/api/terminal' && method === 'GET') return sendJson(res, 200, view.terminal(url.searchParams.get('key') ?? ''));
    if (path === '/api/command' && method === 'POST') {
      const r = await commands.run(req);
      return sendJson(res, r.status, r.body);
    }
    if (path === '/api/events' && method === 'GET') return live.attach(res, this.#sessionOf(req));
    throw fail(404, 'CONSOLE_NOT_FOUND', `nothing at ${path.slice(0, 100)}`);
  }

  async #login(req: IncomingMessage, res: ServerResponse, url: URL, method: string): Promise<void> {
    const login = this.#ctx.options.login;
    if (!login) return send(res, 303, '', 'text/plain', { Location: '/' });
    if (method === 'GET') return this.#loginPage(res, 200, url.searchParams.has('expired') ? 'Your session ended: log in again.' : '');
    if (method !== 'POST') throw fail(405, 'CONSOLE_BAD_REQUEST', 'GET or POST /login');
    const form = new URLSearchParams(await readBody(req, 4096));
    const result = await login.login(
      form.get('password') ?? '',
      req.socket.remoteAddress ?? '?',
      Date.now(),
      cookieValue(req.headers.cookie, DEVICE_COOKIE),
    );
    if (!result.ok) {
      const limit = result.reason === 'throttled' ? result.limit : null;
      this.#refusedLogins.warn(
        { from: req.socket.remoteAddress, reason: result.reason, ...(limit ? { limit } : {}) },
        'console login refused',
      );
      if (result.reason === 'bad') return this.#loginPage(res, 401, 'Wrong password.');
      return this.#loginPage(res, 429, THROTTLED[result.limit], { 'Retry-After': String(result.retryAfterSec) });
    }
    log.info({ from: req.socket.remoteAddress }, 'console login');
    return send(res, 303, '', 'text/plain', {
      Location: '/',
      'Set-Cookie': [sessionCookie(result.token, this.secure), knownBrowserCookie(result.device, this.secure)],
    });
  }
}

function readTls(t: { cert: string; key: string }): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new AgentError(
        'CONSOLE_TLS_UNREADABLE',
        `cannot read the console's TLS ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { file },
        { cause: err },
      );
    }
  };
  return { cert: read(t.cert, 'certificate'), key: read(t.key, 'key') };
}
