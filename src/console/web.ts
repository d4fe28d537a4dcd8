/**
 * The console's HTTP plumbing: security headers on every answer, JSON and error answers in the
 * agent's error shape, bounded request bodies, the Host check (a page bound to loopback answers
 * only to loopback names, so a DNS-rebinding site cannot read it) and the Origin check on POST
 * (with the session cookie's SameSite=Strict, what stops cross-site requests), and the page's
 * files, read once from `assets/` beside this module (src/console/assets, or dist's copy).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { AgentError, isAgentError, toAgentError } from '../core/errors.js';
import type { ErrorCode } from '../core/error-codes.js';
import { readJsonBody, readBody as readRequestBody } from '../core/http-body.js';

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  // same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on a form POST, and the Origin check needs the real one.
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  headers: Record<string, string | string[]> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, JSON.stringify(value), 'application/json; charset=utf-8', headers);
}

/**
 * An error answer: `{"error": {"code", "message", "hint"}}`. A 413 closes the connection, so the
 * rest of a body over the limit is not read.
 */
export function sendError(res: ServerResponse, status: number, err: unknown): void {
  const e = toAgentError(err);
  sendJson(
    res,
    status,
    { error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) } },
    status === 413 ? { Connection: 'close' } : {},
  );
}

export function fail(status: number, code: ErrorCode, message: string): AgentError & { status: number } {
  return Object.assign(new AgentError(code, message, {}), { status });
}

/** The request's Content-Type a body must have, and what the 415 answer says otherwise. */
export interface BodyType {
  type: RegExp;
  message: string;
}

/**
 * A failure of the body reader (src/core/http-body.ts) as the console's answer: 413 over the
 * limit, 415 another Content-Type, 400 not JSON; anything else as it is.
 */
function bodyFailure(err: unknown, expected: BodyType | undefined): unknown {
  if (isAgentError(err, 'CORE_HTTP_BODY_TOO_LARGE')) return fail(413, 'CONSOLE_BAD_REQUEST', err.message);
  if (isAgentError(err, 'CORE_HTTP_BODY_TYPE')) return fail(415, 'CONSOLE_BAD_REQUEST', expected?.message ?? err.message);
  if (isAgentError(err, 'CORE_HTTP_BODY_NOT_JSON')) return fail(400, 'CONSOLE_BAD_REQUEST', 'the body is not JSON');
  return err;
}

/** The body of a request as text, at most `maxBytes` (413 beyond). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  try {
    return (await readRequestBody(req, { maxBytes })).toString('utf8');
  } catch (err) {
    throw bodyFailure(err, undefined);
  }
}

/** The body of a request as JSON, at most `maxBytes` (413 beyond), of the type `expected` (415 otherwise). */
export async function readJson(req: IncomingMessage, maxBytes: number, expected: BodyType): Promise<unknown> {
  try {
    return await readJsonBody(req, { maxBytes, contentType: expected.type });
  } catch (err) {
    throw bodyFailure(err, expected);
  }
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** True for an address or name that only this machine reaches. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The host name of a Host header (`[::1]:8470` → `[::1]`, `localhost:8470` → `localhost`). */
export function hostName(header: string | undefined): string | null {
  if (!header || header.length > 255) return null;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:\s]+)(?::\d{1,5})?$/.exec(header);
  return m ? m[1]!.toLowerCase() : null;
}

/** Whether a request's Host header may reach a console bound to `boundHost`. */
export function hostAllowed(boundHost: string, header: string | undefined): boolean {
  if (!isLoopback(boundHost)) return hostName(header) !== null;
  const name = hostName(header);
  return name !== null && isLoopback(name);
}

/** Whether a POST comes from the console's own page (or an allowed origin). */
export function originAllowed(req: IncomingMessage, secure: boolean, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return false;
  if (allowedOrigins.includes(origin)) return true;
  return origin === `${secure ? 'https' : 'http'}://${req.headers.host ?? ''}`;
}

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const ASSET_TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'login.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The page's files, read once; CONSOLE_ASSETS_MISSING names the folder when one is not there. */
export function loadAssets(dir = new URL('./assets/', import.meta.url)): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    let body: Buffer;
    try {
      body = readFileSync(new URL(name, dir));
    } catch (err) {
      throw new AgentError(
        'CONSOLE_ASSETS_MISSING',
        `the console's page file ${name} is not in ${fileURLToPath(dir)}`,
        { file: name },
        { cause: err },
      );
    }
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

export function sendAsset(req: IncomingMessage, res: ServerResponse, asset: Asset): void {
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304, { ...SECURITY_HEADERS, ETag: asset.etag });
    res.end();
    return;
  }
  send(res, 200, asset.body, asset.type, { ETag: asset.etag, 'Cache-Control': 'no-cache' });
}

/** Text for HTML: & < > " ' escaped. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function securityHeaders(): Record<string, string> {
  return { ...SECURITY_HEADERS };
}
