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
 * | body over maxBodyBytes | 413 | INVALID_PARAMETERS |
 * | token missing, unknown or expired | 401 (WWW-Authenticate: Bearer) | UNAUTHORIZED |
 * | write with an admin-audit key | 403 | FORBIDDEN |
 * | database busy, disk full or unreachable | 503 (Retry-After: 5) | ERROR |
 * | any other failure | 500 | ERROR |
 *
 * Every request gives one pino line (`server:http`): method, path, HTTP status, statusCode,
 * milliseconds, item count, role. Nothing a client sends can crash the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { isAgentError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';
import type { TokenStore } from './auth.js';
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
}

const TOKEN_BODY_LIMIT = 64 * 1024;
/** Beyond this many bytes an oversized body is not even drained: the connection is cut. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

class TooLarge extends Error {}

/** Reads the whole body, or throws TooLarge after draining it (so the client reads the 413). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number(req.headers['content-length'] ?? 0) > limit;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      if (!over) chunks.push(c);
      else chunks.length = 0;
      if (size > DRAIN_LIMIT) req.destroy();
    });
    req.on('end', () => (over ? reject(new TooLarge()) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new TooLarge());
    });
  });
}

function envelope(status: number, code: string, text: string, headers?: Record<string, string>): Outcome {
  return { status, body: fail(code, text), ...(headers ? { headers } : {}) };
}

export interface HttpOptions {
  clientId: string;
  tokens: TokenStore;
  log: Logger;
  /** Counts for diagnostics. */
  stats: { requests: number; tokensIssued: number };
}

export function createRequestHandler(ctx: ServiceContext, options: HttpOptions) {
  const { log } = options;

  async function token(req: IncomingMessage): Promise<Outcome> {
    const oauth = (status: number, error: string, description: string, headers?: Record<string, string>): Outcome => ({
      status,
      body: { error, error_description: description },
      headers: { 'cache-control': 'no-store', ...headers },
    });
    if (req.method !== 'POST') return { ...oauth(405, 'invalid_request', 'use POST'), headers: { allow: 'POST' } };
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const client = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : undefined;
    if (client !== `${options.clientId}:`) {
      return oauth(401, 'invalid_client', 'Authorization must be "Basic base64(<client id>:)" with this service\'s client id', { 'www-authenticate': 'Basic realm="attendance"' });
    }
    let form: URLSearchParams;
    try {
      form = new URLSearchParams((await readBody(req, TOKEN_BODY_LIMIT)).toString('utf8'));
    } catch (err) {
      if (err instanceof TooLarge) return oauth(413, 'invalid_request', `the form body is over ${TOKEN_BODY_LIMIT} bytes`);
      throw err;
    }
    if (form.get('grant_type') !== 'password') return oauth(400, 'unsupported_grant_type', 'grant_type must be "password"');
    const username = form.get('username');
    const password = form.get('password');
    if (!username || !password) return oauth(400, 'invalid_request', 'username (API key) and password (API secret) are required');
    const grant = await options.tokens.grant(username, password);
    if (!grant) return oauth(400, 'invalid_grant', 'unknown API key or wrong secret');
    options.stats.tokensIssued++;
    return {
      status: 200,
      body: { access_token: grant.accessToken, token_type: 'bearer', expires_in: grant.expiresInSec, scope: grant.role },
      headers: { 'cache-control': 'no-store' },
      role: grant.role,
    };
  }

  async function api(req: IncomingMessage, url: URL): Promise<Outcome> {
    const match = matchPath(url.pathname);
    if (!match) return envelope(404, 'INVALID_PARAMETERS', `no operation at ${url.pathname}; the operations are under /api/attendance/ (the report there only) and /attendance/api/`);
    const route = match.table[req.method ?? ''];
    if (!route) {
      const allow = Object.keys(match.table).join(', ');
      return envelope(405, 'INVALID_PARAMETERS', `${req.method} is not allowed on ${url.pathname}; use ${allow}`, { allow });
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!bearer) {
      return { ...envelope(401, 'UNAUTHORIZED', 'no access token: send "Authorization: Bearer <token>" with a token from POST /oauth/token', { 'www-authenticate': 'Bearer realm="attendance"' }), operation: route.operation };
    }
    const check = await options.tokens.check(bearer[1]!);
    if ('problem' in check) {
      const text = check.problem === 'expired' ? 'the access token has expired: get a new one from POST /oauth/token' : 'unknown access token: get one from POST /oauth/token';
      return { ...envelope(401, 'UNAUTHORIZED', text, { 'www-authenticate': `Bearer realm="attendance", error="invalid_token"` }), operation: route.operation };
    }
    if (route.write && check.role !== 'admin') {
      return { ...envelope(403, 'FORBIDDEN', `the API key's role ${check.role} may read but not add, change or delete (${route.operation})`), role: check.role, operation: route.operation };
    }
    let body: unknown;
    if (route.body) {
      let raw: Buffer;
      try {
        raw = await readBody(req, ctx.limits.maxBodyBytes);
      } catch (err) {
        if (err instanceof TooLarge) return { ...envelope(413, 'INVALID_PARAMETERS', `the body is over the limit of ${ctx.limits.maxBodyBytes} bytes; send fewer items per request`), role: check.role, operation: route.operation };
        throw err;
      }
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        return { ...envelope(400, 'INVALID_PARAMETERS', raw.length === 0 ? 'the body is empty; send JSON' : `the body is not valid JSON: ${(err as Error).message}`), role: check.role, operation: route.operation };
      }
    }
    try {
      const r = await route.run(ctx, { code: match.code, query: url.searchParams, body });
      return { status: r.status, body: r.body, ...(r.headers ? { headers: r.headers } : {}), ...(r.items !== undefined ? { items: r.items } : {}), role: check.role, operation: route.operation };
    } catch (err) {
      if (err instanceof BadRequest) return { ...envelope(err.status, 'INVALID_PARAMETERS', err.message), role: check.role, operation: route.operation };
      throw err;
    }
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
      outcome = url.pathname === '/oauth/token' ? await token(req) : await api(req, url);
    } catch (err) {
      if (err instanceof BadRequest) {
        outcome = envelope(err.status, 'INVALID_PARAMETERS', err.message);
      } else {
        const busy = isAgentError(err) && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_DISK_FULL' || err.code === 'SERVER_DB_UNAVAILABLE');
        log.error({ err, reqId, method: req.method, path: url.pathname }, 'request failed');
        outcome = busy
          ? envelope(503, 'ERROR', `the service cannot store right now (${(err as { code: string }).code}); retry later (request ${reqId})`, { 'retry-after': '5' })
          : envelope(500, 'ERROR', `system error; the service log has the details (request ${reqId})`);
      }
    }
    const text = JSON.stringify(outcome.body);
    if (!res.headersSent) {
      res.writeHead(outcome.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
        ...(outcome.status === 413 ? { connection: 'close' } : {}),
        ...outcome.headers,
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
    };
    if (outcome.status >= 500) log.error(line, 'request');
    else if (outcome.status >= 400) log.warn(line, 'request');
    else log.info(line, 'request');
  };
}
