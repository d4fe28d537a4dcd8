/**
 * The HTTP face of the service (node:http): the token endpoint, Bearer checking, roles, body
 * limits, the request log, and the mapping of outcomes to HTTP statuses:
 *
 * | situation | HTTP | statusCode |
 * |---|---|---|
 * | processed (SUCCESS or any section-7 code about the data) | 200 | as processed |
 * | body not JSON, wrong JSON types, too many items, bad path encoding | 400 | INVALID_PARAMETERS |
 * | unknown path | 404 | INVALID_PARAMETERS |
 * | method not allowed on a path | 405 (Allow header) | INVALID_PARAMETERS |
 * | body over maxBodyBytes (Content-Length, or counted) | 413, connection closed | INVALID_PARAMETERS |
 * | token attempts over the address's or the key's rate | 429 (Retry-After) | OAuth error slow_down |
 * | every scrypt slot busy (token-guard.ts) | 503 (Retry-After: 1) | OAuth error temporarily_unavailable |
 * | the client address's share of requests in flight taken (connection-guard.ts) | 503 (Retry-After: 1) after 1 s | ERROR |
 * | token missing, unknown or expired | 401 (WWW-Authenticate: Bearer) | UNAUTHORIZED |
 * | write with an admin-audit key | 403 | FORBIDDEN |
 * | database busy, disk full or unreachable | 503 (Retry-After: 5) | ERROR |
 * | any other failure | 500 | ERROR |
 *
 * Every request gives one pino line (`server:http`): method, path, HTTP status, statusCode,
 * milliseconds, item count, role. Nothing a client sends can crash the process. Any answer given
 * before the request's body was read closes the connection (after a short linger, so the client
 * reads it).
 *
 * Tested in test/integration/api-raw-http.test.ts (statuses over plain HTTP, bad input never a
 * crash, the request log, a busy port) and test/integration/service-abuse.test.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { isAgentError } from '../core/errors.js';
import { readBody, readJsonBody } from '../core/http-body.js';
import type { Logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';
import type { TokenStore } from './auth.js';
import type { ConnectionGuard } from './connection-guard.js';
import type { TokenGuard } from './token-guard.js';
import { BadRequest, fail } from './envelope.js';
import type { ServiceContext } from './context.js';
import { matchPath } from './routes.js';

interface Outcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  items?: number;
  role?: string;
  operation?: string;
  /** A token attempt refused before any secret was verified, and why. */
  refused?: string;
}

const TOKEN_BODY_LIMIT = 64 * 1024;
/** How long a connection closed after an early answer keeps reading (and dropping) what the client still sends. */
const LINGER_MS = 2000;
/** At most one log line per this many ms about refused token attempts. */
const REFUSED_LOG_MS = 10_000;

const lingering = new WeakSet<Socket>();

/** True for a connection already answered and closing (what the client still sends is not a new request). */
export function isClosingAfterAnswer(socket: Socket): boolean {
  return lingering.has(socket);
}

/**
 * An answer given before the request's body was read (413, 401, 429, ...) closes the connection:
 * a client sending 100 MB must not make us read 100 MB to keep it alive. A plain close would
 * reset the connection while the client still writes, and a reset can destroy our answer in the
 * client's buffer before it reads it; so after the answer we only half-close (FIN), keep reading
 * and dropping what still comes for at most LINGER_MS, and close when the client does. Node's
 * server ends a `Connection: close` socket with `destroySoon()`; this socket gets its own.
 */
function closeAfterAnswer(req: IncomingMessage): Record<string, string> {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  lingering.add(socket);
  req.removeAllListeners('data');
  req.resume();
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    socket.resume();
  };
  return { connection: 'close' };
}

function envelope(status: number, code: string, text: string, headers?: Record<string, string>): Outcome {
  return { status, body: fail(code, text), ...(headers ? { headers } : {}) };
}

export interface HttpOptions {
  clientId: string;
  tokens: TokenStore;
  /** Rate limits and the bound on scrypt work of the token endpoint. */
  guard: TokenGuard;
  /** Each client address's share of the requests in flight. */
  connections: ConnectionGuard;
  log: Logger;
  /** Counts for diagnostics. */
  stats: { requests: number; tokensIssued: number };
}

export function createRequestHandler(ctx: ServiceContext, options: HttpOptions) {
  const { log } = options;
  // Refused token attempts and requests are an attacker's to multiply: one line for the first,
  // then at most one every REFUSED_LOG_MS saying how many were refused since.
  let refusedSince = 0;
  let refusedLoggedAt = -Infinity;
  const logRefused = (line: Record<string, unknown>) => {
    refusedSince++;
    const now = monotonicMs();
    if (now - refusedLoggedAt < REFUSED_LOG_MS) return;
    log.warn(
      { ...line, refusedSinceLastLine: refusedSince },
      'requests refused (token rate limit, scrypt slots busy, or the address has its share in flight)',
    );
    refusedSince = 0;
    refusedLoggedAt = now;
  };

  async function token(req: IncomingMessage, res: ServerResponse): Promise<Outcome> {
    const oauth = (status: number, error: string, description: string, headers?: Record<string, string>): Outcome => ({
      status,
      body: { error, error_description: description },
      headers: { 'cache-control': 'no-store', ...headers },
    });
    if (req.method !== 'POST') return { ...oauth(405, 'invalid_request', 'use POST'), headers: { allow: 'POST' } };
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const client = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : undefined;
    if (client !== `${options.clientId}:`) {
      return oauth(401, 'invalid_client', 'Authorization must be "Basic base64(<client id>:)" with this service\'s client id', {
        'www-authenticate': 'Basic realm="attendance"',
      });
    }
    let form: URLSearchParams;
    try {
      form = new URLSearchParams((await readBody(req, { maxBytes: TOKEN_BODY_LIMIT, continueOn: res })).toString('utf8'));
    } catch (err) {
      if (isAgentError(err, 'CORE_HTTP_BODY_TOO_LARGE'))
        return oauth(413, 'invalid_request', `the form body is over ${TOKEN_BODY_LIMIT} bytes`);
      throw err;
    }
    if (form.get('grant_type') !== 'password') return oauth(400, 'unsupported_grant_type', 'grant_type must be "password"');
    const username = form.get('username');
    const password = form.get('password');
    if (!username || !password) return oauth(400, 'invalid_request', 'username (API key) and password (API secret) are required');
    const admission = options.guard.admit(req.socket.remoteAddress, username);
    if (!admission.ok) {
      // A refused client waits for its answer (a timer, nothing else): see TokenGuard.
      if (admission.status === 429 && options.guard.refusalDelayMs > 0)
        await new Promise((r) => setTimeout(r, options.guard.refusalDelayMs));
      const why =
        admission.reason === 'busy'
          ? 'the service is verifying other secrets right now'
          : admission.reason === 'key'
            ? 'too many failed attempts for this API key'
            : 'too many token requests from this address';
      return {
        ...oauth(
          admission.status,
          admission.status === 429 ? 'slow_down' : 'temporarily_unavailable',
          `${why}; retry after ${admission.retryAfterSec} s`,
          { 'retry-after': String(admission.retryAfterSec), connection: 'close' },
        ),
        refused: admission.reason,
      };
    }
    let refusedSecret = false;
    let grant: Awaited<ReturnType<TokenStore['grant']>>;
    try {
      grant = await options.tokens.grant(username, password);
      refusedSecret = grant === undefined;
    } finally {
      admission.done(!refusedSecret);
    }
    if (!grant) return oauth(400, 'invalid_grant', 'unknown API key or wrong secret');
    options.stats.tokensIssued++;
    return {
      status: 200,
      body: { access_token: grant.accessToken, token_type: 'bearer', expires_in: grant.expiresInSec, scope: grant.role },
      headers: { 'cache-control': 'no-store' },
      role: grant.role,
    };
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<Outcome> {
    const match = matchPath(url.pathname);
    if (!match)
      return envelope(
        404,
        'INVALID_PARAMETERS',
        `no operation at ${url.pathname}; the operations are under /api/attendance/ (the report there only) and /attendance/api/`,
      );
    const route = match.table[req.method ?? ''];
    if (!route) {
      const allow = Object.keys(match.table).join(', ');
      return envelope(405, 'INVALID_PARAMETERS', `${req.method} is not allowed on ${url.pathname}; use ${allow}`, { allow });
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!bearer) {
      return {
        ...envelope(401, 'UNAUTHORIZED', 'no access token: send "Authorization: Bearer <token>" with a token from POST /oauth/token', {
          'www-authenticate': 'Bearer realm="attendance"',
        }),
        operation: route.operation,
      };
    }
    const check = await options.tokens.check(bearer[1]!);
    if ('problem' in check) {
      const text =
        check.problem === 'expired'
          ? 'the access token has expired: get a new one from POST /oauth/token'
          : 'unknown access token: get one from POST /oauth/token';
      return {
        ...envelope(401, 'UNAUTHORIZED', text, { 'www-authenticate': `Bearer realm="attendance", error="invalid_token"` }),
        operation: route.operation,
      };
    }
    if (route.write && check.role !== 'admin') {
      return {
        ...envelope(403, 'FORBIDDEN', `the API key's role ${check.role} may read but not add, change or delete (${route.operation})`),
        role: check.role,
        operation: route.operation,
      };
    }
    let body: unknown;
    if (route.body) {
      try {
        body = await readJsonBody(req, { maxBytes: ctx.limits.maxBodyBytes, continueOn: res });
      } catch (err) {
        if (isAgentError(err, 'CORE_HTTP_BODY_TOO_LARGE'))
          return {
            ...envelope(
              413,
              'INVALID_PARAMETERS',
              `the body is over the limit of ${ctx.limits.maxBodyBytes} bytes; send fewer items per request`,
            ),
            role: check.role,
            operation: route.operation,
          };
        // 'the body is empty; send JSON' or 'the body is not valid JSON: …'
        if (isAgentError(err, 'CORE_HTTP_BODY_NOT_JSON'))
          return { ...envelope(400, 'INVALID_PARAMETERS', err.message), role: check.role, operation: route.operation };
        throw err;
      }
    }
    try {
      const r = await route.run(ctx, { code: match.code, query: url.searchParams, body });
      return {
        status: r.status,
        body: r.body,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.items !== undefined ? { items: r.items } : {}),
        role: check.role,
        operation: route.operation,
      };
    } catch (err) {
      if (err instanceof BadRequest)
        return { ...envelope(err.status, 'INVALID_PARAMETERS', err.message), role: check.role, operation: route.operation };
      throw err;
    }
  }

  /** One request, answered and logged; `overShare`: its address already has its share of requests in flight. */
  async function answer(req: IncomingMessage, res: ServerResponse, overShare: boolean): Promise<void> {
    const started = monotonicMs();
    options.stats.requests++;
    const reqId = randomUUID().slice(0, 8);
    let url: URL;
    let outcome: Outcome;
    try {
      url = new URL(req.url ?? '/', 'http://service.invalid');
    } catch {
      url = new URL('http://service.invalid/');
    }
    try {
      if (overShare) {
        // Answered after a wait (a timer, nothing else), as a held connection is: answered at once,
        // a client with its share in flight sent the next request as fast as the 503s came back.
        await new Promise((r) => setTimeout(r, options.connections.limits.refusalDelayMs));
        outcome = {
          ...envelope(
            503,
            'ERROR',
            `too many requests in flight from this address (at most ${options.connections.limits.requestsPerAddress} at once); retry after 1 s`,
            { 'retry-after': '1' },
          ),
          refused: 'in-flight',
        };
      } else outcome = url.pathname === '/oauth/token' ? await token(req, res) : await api(req, res, url);
    } catch (err) {
      // The client closed (or was cut by a timeout) before its body arrived: there is nobody to answer.
      if (isAgentError(err, 'CORE_HTTP_BODY_ABORTED')) {
        log.info(
          { reqId, method: req.method, path: url.pathname, ms: monotonicMs() - started },
          'client went away before its body arrived',
        );
        return;
      }
      if (err instanceof BadRequest) {
        outcome = envelope(err.status, 'INVALID_PARAMETERS', err.message);
      } else {
        const busy =
          isAgentError(err) && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_DISK_FULL' || err.code === 'SERVER_DB_UNAVAILABLE');
        log.error({ err, reqId, method: req.method, path: url.pathname }, 'request failed');
        outcome = busy
          ? envelope(
              503,
              'ERROR',
              `the service cannot store right now (${(err as { code: string }).code}); retry later (request ${reqId})`,
              { 'retry-after': '5' },
            )
          : envelope(500, 'ERROR', `system error; the service log has the details (request ${reqId})`);
      }
    }
    const text = JSON.stringify(outcome.body);
    if (!res.headersSent) {
      res.writeHead(outcome.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
        ...outcome.headers,
        ...(!req.complete ? closeAfterAnswer(req) : {}),
      });
    }
    res.end(text);
    const statusCode = (outcome.body as { statusCode?: string; error?: string }).statusCode ?? (outcome.body as { error?: string }).error;
    const line = {
      reqId,
      method: req.method,
      path: url.pathname,
      status: outcome.status,
      statusCode,
      ms: monotonicMs() - started,
      ...(outcome.operation ? { operation: outcome.operation } : {}),
      ...(outcome.items !== undefined ? { items: outcome.items } : {}),
      ...(outcome.role ? { role: outcome.role } : {}),
      ...(outcome.refused ? { refused: outcome.refused } : {}),
    };
    if (outcome.refused) logRefused(line);
    else if (outcome.status >= 500) log.error(line, 'request');
    else if (outcome.status >= 400) log.warn(line, 'request');
    else log.info(line, 'request');
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Counted from its headers to its answer (or the client's leaving).
    const release = options.connections.beginRequest(req.socket.remoteAddress);
    try {
      await answer(req, res, release === null);
    } finally {
      release?.();
    }
  };
}
