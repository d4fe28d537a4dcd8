/**
 * The attendance service as a library: `createAttendanceService(options)` opens (lazily) its
 * store (an SQLite file, or PostgreSQL for a `postgres://` URL: store/store.ts), applies the
 * `server` migrations, and serves over node:http when `listen` is called. Used by
 * `edge-agent serve`, by the agent's embedded default and by the tests. Several services on one
 * PostgreSQL database are replicas of one service: any of them answers any request.
 *
 * ```ts
 * const service = createAttendanceService({ dbPath: 'data/service.db' });
 * const { apiKey, apiSecret } = await service.createApiKey('admin');
 * const url = await service.listen(0, '127.0.0.1');   // "http://127.0.0.1:<port>"
 * ...
 * await service.close();
 * ```
 *
 * Tested in test/integration/api-contract.test.ts and test/integration/api-raw-http.test.ts (the
 * service in-process on SQLite and PostgreSQL) and test/integration/api-replicas.test.ts (three
 * replicas on one database).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { TzOffsetUnit } from '../api/date-time.js';
import { AgentError } from '../core/errors.js';
import { logger as makeLogger, type Logger } from '../core/logger.js';
import { createApiKey, DEFAULT_TOKEN_RECHECK_MS, TokenStore, type ApiKeyPair, type Role } from './auth.js';
import { BiometricSeal } from './biometric-seal.js';
import { DEFAULT_LIMITS, type ServiceContext, type ServiceLimits } from './context.js';
import { ConnectionGuard, DEFAULT_CONNECTION_SHARES, maxHeldFor } from './connection-guard.js';
import { createRequestHandler, isClosingAfterAnswer } from './http.js';
import { TokenGuard, type TokenGuardOptions } from './token-guard.js';
import { DEFAULT_SHIFTS, loadShiftsFile, parseShifts, type Shifts, type ShiftsConfig } from './shifts.js';
import { openServiceStore } from './store/open.js';
import type { ServiceStore } from './store/store.js';

export const DEFAULT_CLIENT_ID = 'edge-agent';
export const DEFAULT_TOKEN_TTL_SEC = 3600;

/** How long a client may take and how many may connect (docs/integrator.md, Limits). */
export interface HttpServerLimits {
  /** The request's headers must have arrived within this time (ms). Default 10 s. */
  headersTimeoutMs: number;
  /** The whole request, body included, within this time (ms). Default 60 s. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this time (ms). Default 10 s. */
  keepAliveTimeoutMs: number;
  /** Connections at once; more are closed as they come. Default 512. */
  maxConnections: number;
  /**
   * Connections at once from one client address (IPv6: one /64); more are held for a second,
   * then answered 503 with Retry-After (connection-guard.ts). Default 64.
   */
  maxConnectionsPerAddress: number;
  /** Requests handled at once for one client address; more are answered 503 with Retry-After at once. Default 32. */
  maxRequestsPerAddress: number;
}

export const DEFAULT_HTTP_LIMITS: HttpServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 10_000,
  maxConnections: 512,
  maxConnectionsPerAddress: DEFAULT_CONNECTION_SHARES.perAddress,
  maxRequestsPerAddress: DEFAULT_CONNECTION_SHARES.requestsPerAddress,
};

export interface AttendanceServiceOptions {
  /**
   * The SQLite file (created if missing), ':memory:', or a PostgreSQL URL
   * (`postgres://user@host:5432/db`, optionally `?pool_max=N`; the database must exist).
   */
  dbPath: string;
  /** The OAuth2 client id the token endpoint expects in its Basic header. Default `edge-agent`. */
  clientId?: string;
  /** Lifetime of an access token, seconds. Default 3600. */
  tokenTtlSec?: number;
  /** Shifts for events and the report: a configuration object or the path of a JSON/YAML file. */
  shifts?: ShiftsConfig | string;
  /** Largest accepted request body, bytes. Default 8 MiB. */
  maxBodyBytes?: number;
  limits?: Partial<ServiceLimits>;
  /** Unit of `tzOffset` on the wire. Default minutes east of UTC. */
  tzOffsetUnit?: TzOffsetUnit;
  /** Timeouts and the connection cap of the HTTP server. */
  http?: Partial<HttpServerLimits>;
  /**
   * Rate limits of the token endpoint and the bound on scrypt work in flight (token-guard.ts).
   * Per process: each replica counts its own clients.
   */
  tokenGuard?: TokenGuardOptions;
  /**
   * 32-byte key sealing biometric records. Default: the file of EDGE_AGENT_BIOMETRIC_KEY_FILE or
   * the systemd credential biometric-key; on SQLite else a 0600 key file next to the database.
   */
  biometricKey?: Buffer;
  /** A token seen is read again from the database after this many ms (revocations reach every replica). Default 5000. */
  tokenRecheckMs?: number;
  logger?: Logger;
}

export interface AttendanceService {
  /** Starts serving; resolves with the base URL (`http://host:port`). Port 0 picks a free port. */
  listen(port?: number, host?: string): Promise<string>;
  /** The base URL once listening. */
  readonly url: string | undefined;
  /** Stops accepting, closes connections and the database. */
  close(): Promise<void>;
  /** Creates an API key; the secret is returned once and stored hashed. */
  createApiKey(role: Role): Promise<ApiKeyPair>;
  /** Invalidates every access token issued so far. */
  revokeTokens(): Promise<void>;
  stats(): {
    requests: number;
    tokensIssued: number;
    tokensRefused: { address: number; key: number; busy: number };
    /** Connections closed at once: over the cap in all, or too many held. */
    connectionsDropped: number;
    /** Connections over their address's share: held, then answered 503. */
    connectionsHeld: number;
    /** Requests answered 503 because their address had its share in flight. */
    requestsRefused: number;
  };
  /** Resolves when the database is open and migrated (rejects with why it cannot be). */
  ready(): Promise<void>;
}

function resolveShifts(shifts: ShiftsConfig | string | undefined): Shifts {
  if (typeof shifts === 'string') return loadShiftsFile(shifts);
  return parseShifts(shifts ?? DEFAULT_SHIFTS, 'shifts');
}

/** Opens the service's store (SQLite file or PostgreSQL URL) and applies the `server` migrations. */
export function openServiceDatabase(db: string): Promise<ServiceStore> {
  return openServiceStore(db);
}

/** The key check value recorded in the database must be this key's: else the records are sealed under another. */
async function checkBiometricKey(store: ServiceStore, seal: BiometricSeal): Promise<void> {
  if (await store.sameBiometricKey(seal.keyCheck())) return;
  throw new AgentError(
    'SERVER_BIOMETRIC_KEY',
    `the biometric records in ${store.where} are sealed under another key than the one this service was given`,
    { db: store.where },
    {
      hint: 'give this service (every replica) the key the database was started with; stored biometrics cannot be read under another key',
    },
  );
}

export function createAttendanceService(options: AttendanceServiceOptions): AttendanceService {
  const log = options.logger ?? makeLogger('server:http');
  const shifts = resolveShifts(options.shifts);
  const limits: ServiceLimits = {
    ...DEFAULT_LIMITS,
    ...options.limits,
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
  };
  const ttl = options.tokenTtlSec ?? DEFAULT_TOKEN_TTL_SEC;
  if (!(ttl > 0)) throw new AgentError('SERVER_BAD_OPTION', `tokenTtlSec must be positive, got ${ttl}`, { tokenTtlSec: ttl });
  const stats = { requests: 0, tokensIssued: 0 };
  const httpLimits: HttpServerLimits = { ...DEFAULT_HTTP_LIMITS, ...options.http };
  const guard = new TokenGuard(options.tokenGuard, availableParallelism());
  let connectionsDropped = 0;
  let connectionsRefused = 0;
  /** A refused connection: logged for the first, then every 1000th (an attacker's to multiply). */
  const noteRefused = (r: { kind: string; address?: string }) => {
    connectionsRefused++;
    if (connectionsRefused === 1 || connectionsRefused % 1000 === 0)
      log.warn(
        {
          maxConnections: httpLimits.maxConnections,
          maxConnectionsPerAddress: httpLimits.maxConnectionsPerAddress,
          refused: connectionsRefused,
          last: r,
        },
        'connection limits reached: a connection over its address share is held, then answered 503; over the cap in all, closed',
      );
  };
  let acceptErrors = 0;
  const noteAcceptError = (err: NodeJS.ErrnoException) => {
    acceptErrors++;
    if (acceptErrors === 1 || acceptErrors % 1000 === 0)
      log.error(
        { err: { message: err.message, code: err.code }, acceptErrors },
        'a connection could not be accepted (EMFILE: raise LimitNOFILE in the unit, or lower --max-connections)',
      );
  };
  const connections = new ConnectionGuard(
    {
      maxConnections: httpLimits.maxConnections,
      perAddress: httpLimits.maxConnectionsPerAddress,
      requestsPerAddress: httpLimits.maxRequestsPerAddress,
      refusalDelayMs: DEFAULT_CONNECTION_SHARES.refusalDelayMs,
      maxHeld: maxHeldFor(httpLimits.maxConnections),
    },
    noteRefused,
  );

  const opened = (async () => {
    const store = await openServiceStore(options.dbPath);
    try {
      const seal = BiometricSeal.forService({ kind: store.kind, path: options.dbPath }, options.biometricKey);
      await checkBiometricKey(store, seal);
      const ctx: ServiceContext = { store, shifts, tzOffsetUnit: options.tzOffsetUnit ?? 'minutes', seal, limits };
      const tokens = new TokenStore(store, ttl, options.tokenRecheckMs ?? DEFAULT_TOKEN_RECHECK_MS);
      return {
        store,
        ctx,
        tokens,
        handler: createRequestHandler(ctx, { clientId: options.clientId ?? DEFAULT_CLIENT_ID, tokens, guard, connections, log, stats }),
      };
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  })();
  opened.catch(() => undefined); // reported by whichever method awaits it

  let server: Server | undefined;
  let url: string | undefined;
  let closed = false;

  return {
    get url() {
      return url;
    },
    async ready() {
      await opened;
    },
    async listen(port = 0, host = '127.0.0.1') {
      const { handler } = await opened;
      if (server) throw new AgentError('SERVER_ALREADY_LISTENING', `the service already listens at ${url}`, { url });
      const serve = (req: IncomingMessage, res: ServerResponse) => {
        handler(req, res).catch((err) => {
          log.error({ err }, 'request handler failed');
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ statusCode: 'ERROR', statusDescription: 'system error', returnValue: null }));
        });
      };
      // The timeouts are checked this often (node's default, 30 s, would let a slow client keep
      // its socket that much longer than the limit).
      const srv = createServer({ connectionsCheckingInterval: Math.max(100, Math.min(1000, httpLimits.headersTimeoutMs / 4)) }, serve);
      // `Expect: 100-continue`: the handler says continue only when it reads a body it will take.
      srv.on('checkContinue', serve);
      // Slow clients cannot hold sockets: headers, the whole request and idle keep-alive each
      // have a limit. No address takes more than its share of the connections (held, then 503),
      // and connections over the cap in all are closed as they come (connection-guard.ts).
      srv.headersTimeout = httpLimits.headersTimeoutMs;
      srv.requestTimeout = httpLimits.requestTimeoutMs;
      srv.keepAliveTimeout = httpLimits.keepAliveTimeoutMs;
      connections.attach(srv);
      // Past the admitted and the held together: node closes it before the guard sees it.
      srv.on('drop', (data?: { remoteAddress?: string }) => {
        connectionsDropped++;
        noteRefused({ kind: 'dropped', ...(data?.remoteAddress ? { address: data.remoteAddress } : {}) });
      });
      srv.on('clientError', (err, socket) => {
        // The client of an answered, closing connection stopped mid-body: nothing to tell it.
        if (isClosingAfterAnswer(socket as Socket)) return void socket.destroy();
        const code = (err as { code?: string }).code;
        const timedOut = code === 'ERR_HTTP_REQUEST_TIMEOUT';
        log.warn(
          { err: { message: err.message, code } },
          timedOut ? 'request not received in time: connection closed' : 'malformed HTTP request',
        );
        const [status, text] = timedOut
          ? [
              '408 Request Timeout',
              `the request did not arrive within ${httpLimits.requestTimeoutMs} ms (headers within ${httpLimits.headersTimeoutMs} ms)`,
            ]
          : ['400 Bad Request', 'malformed HTTP request'];
        if (socket.writable)
          socket.end(
            `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ statusCode: 'INVALID_PARAMETERS', statusDescription: text, returnValue: null })}`,
          );
        else socket.destroy();
      });
      await new Promise<void>((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException) => {
          reject(
            new AgentError(
              'SERVER_LISTEN',
              `cannot listen on ${host}:${port}: ${err.message}`,
              { host, port, errno: err.code },
              {
                hint:
                  err.code === 'EADDRINUSE'
                    ? 'another program uses this port: pick another with --port (0 picks a free one)'
                    : 'check the host and port',
                cause: err,
              },
            ),
          );
        };
        srv.once('error', onError);
        srv.listen(port, host, () => {
          srv.off('error', onError);
          // From now on a server error is one failed accept (EMFILE: out of file descriptors),
          // not a reason to stop serving everyone else.
          srv.on('error', (err: NodeJS.ErrnoException) => noteAcceptError(err));
          resolve();
        });
      });
      server = srv;
      const addr = srv.address() as AddressInfo;
      url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
      log.info({ url, db: (await opened).store.where }, 'attendance service listening');
      return url;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (server) {
        const srv = server;
        await new Promise<void>((resolve) => {
          srv.close(() => resolve());
          connections.closeHeld();
          srv.closeIdleConnections();
          setTimeout(() => srv.closeAllConnections(), 2000).unref();
        });
      }
      const o = await opened.catch(() => undefined);
      await o?.store.close();
    },
    async createApiKey(role) {
      const { store } = await opened;
      return createApiKey(store, role);
    },
    async revokeTokens() {
      const { tokens } = await opened;
      await tokens.revokeAll();
    },
    stats: () => ({
      ...stats,
      tokensRefused: { ...guard.refused },
      connectionsDropped: connectionsDropped + connections.refused.dropped,
      connectionsHeld: connections.refused.held,
      requestsRefused: connections.refused.requests,
    }),
  };
}
