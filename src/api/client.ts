/**
 * The typed client of the attendance API: OAuth2 password grant, token cached and refreshed
 * before expiry and once on a 401, Bearer presentation, all nine operations under either path
 * form, timeouts.
 *
 * Non-SUCCESS envelopes are returned, not thrown: callers read the per-item statuses. What is
 * thrown is an `AgentError` a caller can act on:
 * | code | when | retryable |
 * |---|---|---|
 * | API_NETWORK | connection refused/reset, DNS | yes |
 * | API_TIMEOUT | no complete answer within `timeoutMs` | yes |
 * | API_HTTP_5XX | HTTP 5xx | yes |
 * | API_RATE_LIMITED | HTTP 429; `context.retryAfterMs` from Retry-After | yes |
 * | API_BAD_RESPONSE | body not JSON or not an envelope | yes |
 * | API_AUTH_FAILED | the token endpoint refused key/secret/client id | no |
 * | API_UNAUTHORIZED | 401 again after one token refresh | no |
 * | API_FORBIDDEN | 403 (for example a read-only audit key writing) | no |
 * | API_HTTP_4XX | any other 4xx | no |
 * | API_NOT_SUPPORTED | the report under the `attendance` path form | no |
 * | CORE_ABORTED | the caller's AbortSignal fired | no |
 * Context carries `operation`, `path`, and `status` where there is one; never the token.
 * Connections are kept alive by the global fetch (undici) dispatcher.
 */
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { monotonicMs } from '../core/time.js';
import { tzOffsetToWire, type TzOffsetUnit } from './date-time.js';
import { isEnvelope, normalizeEvent, normalizeUser, normalizeWorkHourRow } from './normalize.js';
import { apiPaths, TOKEN_PATH } from './paths.js';
import type { AttendanceEvent, BiometricItem, Envelope, GroupType, PathForm, User, WorkHourRow } from './types.js';

const log = logger('api:client');

export interface AttendanceClientOptions {
  baseUrl: string;
  clientId: string;
  apiKey: string;
  apiSecret: string;
  pathForm?: PathForm;
  timeoutMs?: number;
  tzOffsetUnit?: TzOffsetUnit;
  /** Refresh the token this many seconds before it expires (at most half its lifetime). Default 30. */
  refreshMarginSec?: number;
}

interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** Parses a Retry-After value (delta seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * An https URL whose port answers plain HTTP fails the TLS handshake (OpenSSL: "wrong version
 * number", EPROTO): the hint is the http:// URL. Null for any other failure.
 */
function plainHttpPort(baseUrl: string, err: unknown): string | null {
  if (!baseUrl.startsWith('https://')) return null;
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (
      code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
      code === 'EPROTO' ||
      code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
      (typeof message === 'string' && /wrong version number|packet length too long/i.test(message))
    )
      return `${baseUrl} speaks TLS to a port that answers plain HTTP: use ${baseUrl.replace(/^https:/, 'http:')} (or the service's https port)`;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function networkCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export class AttendanceClient {
  readonly options: Required<AttendanceClientOptions>;
  readonly #paths: ReturnType<typeof apiPaths>;
  #token: { value: string; refreshAt: number } | undefined;
  #tokenInFlight: Promise<string> | undefined;
  /** Number of tokens obtained so far (for diagnostics and tests). */
  tokensObtained = 0;

  constructor(options: AttendanceClientOptions) {
    this.options = {
      pathForm: 'api',
      timeoutMs: 10_000,
      tzOffsetUnit: 'minutes',
      refreshMarginSec: 30,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
    this.#paths = apiPaths(this.options.pathForm);
  }

  // ---- token -------------------------------------------------------------------------------

  /** The cached access token, obtaining a new one when there is none or it is about to expire. */
  getToken(): Promise<string> {
    if (this.#token && monotonicMs() < this.#token.refreshAt) return Promise.resolve(this.#token.value);
    if (!this.#tokenInFlight) {
      this.#tokenInFlight = this.#fetchToken().finally(() => {
        this.#tokenInFlight = undefined;
      });
    }
    return this.#tokenInFlight;
  }

  /** Forgets the cached token; the next call obtains a new one. */
  invalidateToken(): void {
    this.#token = undefined;
  }

  async #fetchToken(): Promise<string> {
    const operation = 'token';
    const path = TOKEN_PATH;
    const form = new URLSearchParams({ grant_type: 'password', username: this.options.apiKey, password: this.options.apiSecret });
    const started = monotonicMs();
    const res = await this.#fetch(operation, path, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.options.clientId}:`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
    });
    const text = await this.#readBody(operation, path, res, undefined);
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      let reason = text.slice(0, 200);
      try {
        const j = JSON.parse(text) as { error?: string; error_description?: string };
        reason = [j.error, j.error_description].filter(Boolean).join(': ') || reason;
      } catch {
        /* keep the text */
      }
      throw new AgentError(
        'API_AUTH_FAILED',
        `the attendance service refused the API key (HTTP ${res.status}): ${reason}`,
        { operation, path, status: res.status },
        {
          hint: 'check api.clientId in the config and the API key and secret (edge-agent keys create makes a new pair on our service)',
        },
      );
    }
    this.#throwForStatus(operation, path, res, text);
    let body: { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw this.#badResponse(operation, path, res.status, 'the token answer is not JSON');
    }
    if (typeof body?.access_token !== 'string' || body.access_token === '') {
      throw this.#badResponse(operation, path, res.status, 'the token answer has no access_token');
    }
    const ttlSec = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 300;
    const marginMs = Math.min(this.options.refreshMarginSec * 1000, (ttlSec * 1000) / 2);
    this.#token = { value: body.access_token, refreshAt: started + ttlSec * 1000 - marginMs };
    this.tokensObtained++;
    log.debug({ expiresInSec: ttlSec }, 'obtained an access token');
    return body.access_token;
  }

  // ---- transport ---------------------------------------------------------------------------

  /** `target`: the path with its query string; errors name the path only. */
  async #fetch(operation: string, target: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const path = target.split('?')[0]!;
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    try {
      return await fetch(`${this.options.baseUrl}${target}`, { ...init, signal: combined });
    } catch (err) {
      throw this.#transportError(operation, path, err, timeout, signal);
    }
  }

  async #readBody(operation: string, path: string, res: Response, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      throw this.#transportError(operation, path, err, undefined, signal);
    }
  }

  #transportError(
    operation: string,
    path: string,
    err: unknown,
    timeout: AbortSignal | undefined,
    signal: AbortSignal | undefined,
  ): AgentError {
    if (signal?.aborted) return new AgentError('CORE_ABORTED', `${operation} aborted by the caller`, { operation, path }, { cause: err });
    const name = (err as { name?: string }).name;
    if (timeout?.aborted || name === 'TimeoutError' || name === 'AbortError') {
      return new AgentError(
        'API_TIMEOUT',
        `the attendance service did not answer ${operation} within ${this.options.timeoutMs} ms`,
        { operation, path, timeoutMs: this.options.timeoutMs },
        {
          hint: 'the service or the network is slow or down (api.timeoutMs sets the limit)',
          retryable: true,
          cause: err,
        },
      );
    }
    const code = networkCode(err);
    return new AgentError(
      'API_NETWORK',
      `cannot reach the attendance service at ${this.options.baseUrl} (${code ?? (err as Error).message})`,
      { operation, path, errno: code },
      {
        hint: plainHttpPort(this.options.baseUrl, err) ?? 'check api.url in the config, that the service runs, and the network',
        retryable: true,
        cause: err,
      },
    );
  }

  #badResponse(operation: string, path: string, status: number, what: string): AgentError {
    return new AgentError(
      'API_BAD_RESPONSE',
      `${what} (${operation}, HTTP ${status})`,
      { operation, path, status },
      {
        hint: 'api.url may point at something that is not the attendance service (a proxy or captive portal?)',
        retryable: true,
      },
    );
  }

  /** Throws for the statuses that are not answers (5xx, 429, 403, other 4xx). */
  #throwForStatus(operation: string, path: string, res: Response, text: string): void {
    if (res.status >= 200 && res.status < 300) return;
    let envelope: { statusCode?: string; statusDescription?: string } = {};
    try {
      const j = JSON.parse(text) as unknown;
      if (isEnvelope(j)) envelope = j;
    } catch {
      /* not JSON */
    }
    const context: Record<string, unknown> = { operation, path, status: res.status };
    if (envelope.statusCode) context.statusCode = envelope.statusCode;
    if (envelope.statusDescription) context.statusDescription = envelope.statusDescription;
    const said = envelope.statusDescription ? `: ${envelope.statusDescription}` : '';
    if (res.status === 429) {
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
      if (retryAfterMs !== undefined) context.retryAfterMs = retryAfterMs;
      throw new AgentError('API_RATE_LIMITED', `the attendance service asks to slow down (HTTP 429, ${operation})`, context, {
        hint: 'the service asks to slow down: wait as long as it says (Retry-After), then try again',
        retryable: true,
      });
    }
    if (res.status >= 500) {
      throw new AgentError('API_HTTP_5XX', `the attendance service failed (HTTP ${res.status}, ${operation})${said}`, context, {
        hint: 'a server-side problem: the service logs say more',
        retryable: true,
      });
    }
    if (res.status === 401) {
      throw new AgentError(
        'API_UNAUTHORIZED',
        `the attendance service refused the access token for ${operation} even after a refresh (HTTP 401)${said}`,
        context,
        {
          hint: 'check that the API key still exists on the service and that api.clientId is right',
        },
      );
    }
    if (res.status === 403) {
      throw new AgentError('API_FORBIDDEN', `the API key may not ${operation} (HTTP 403)${said}`, context, {
        hint: 'use a key with the admin role; admin-audit keys may only read',
      });
    }
    if (res.status >= 400) {
      throw new AgentError('API_HTTP_4XX', `the attendance service rejected ${operation} (HTTP ${res.status})${said}`, context, {
        hint: 'the request does not fit this service: check api.url and api.pathForm',
      });
    }
    throw this.#badResponse(operation, path, res.status, `unexpected HTTP status ${res.status}`);
  }

  async #request(operation: string, method: string, path: string, options: RequestOptions = {}): Promise<Envelope<unknown>> {
    let url = path;
    if (options.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(options.query)) if (v !== undefined) q.set(k, String(v));
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    for (let attempt = 0; ; attempt++) {
      const token = await this.getToken();
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await this.#fetch(operation, url, { method, headers, ...(body === undefined ? {} : { body }) }, options.signal);
      const text = await this.#readBody(operation, path, res, options.signal);
      if (res.status === 401 && attempt === 0) {
        log.debug({ operation }, 'access token refused; obtaining a new one');
        this.invalidateToken();
        continue;
      }
      this.#throwForStatus(operation, path, res, text);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw this.#badResponse(operation, path, res.status, 'the answer is not JSON');
      }
      if (!isEnvelope(json)) throw this.#badResponse(operation, path, res.status, 'the answer is not an envelope (no statusCode)');
      const env: Envelope<unknown> = { statusCode: json.statusCode, returnValue: json.returnValue ?? null };
      if (typeof json.statusDescription === 'string') env.statusDescription = json.statusDescription;
      return env;
    }
  }

  #items<T>(operation: string, path: string, env: Envelope<unknown>, read: (v: unknown) => T): Envelope<Envelope<T>[]> {
    if (env.returnValue === null) return env as Envelope<Envelope<T>[]>;
    if (!Array.isArray(env.returnValue))
      throw this.#badResponse(operation, path, 200, 'the answer should carry an array of per-item envelopes');
    const items = env.returnValue.map((item) => {
      if (!isEnvelope(item)) throw this.#badResponse(operation, path, 200, 'a per-item result is not an envelope');
      const out: Envelope<T> = {
        statusCode: item.statusCode,
        returnValue: item.returnValue === null || item.returnValue === undefined ? null : read(item.returnValue),
      };
      if (typeof item.statusDescription === 'string') out.statusDescription = item.statusDescription;
      return out;
    });
    return { ...env, returnValue: items };
  }

  #single<T>(env: Envelope<unknown>, read: (v: unknown) => T): Envelope<T> {
    return { ...env, returnValue: env.returnValue === null ? null : read(env.returnValue) };
  }

  #wireEvent(e: AttendanceEvent): Record<string, unknown> {
    const out: Record<string, unknown> = { employeeCode: e.employeeCode };
    if (e.inTime) out.inTime = e.inTime;
    if (e.outTime) out.outTime = e.outTime;
    if (e.shift) out.shift = e.shift;
    out.tzOffset = tzOffsetToWire(e.tzOffset ?? 0, this.options.tzOffsetUnit);
    return out;
  }

  #readEvent = (v: unknown) => normalizeEvent(v, this.options.tzOffsetUnit);

  // ---- the nine operations ----------------------------------------------------------------

  /** 1. Adds the user, or updates the one with the same employeeCode. */
  async addOrUpdateUser(user: User): Promise<Envelope<User>> {
    return this.#single(await this.#request('addOrUpdateUser', 'POST', this.#paths.user, { body: user }), normalizeUser);
  }

  /** 2. Deletes the user and their biometrics (the service keeps their events). */
  async deleteUser(code: string): Promise<Envelope<User>> {
    return this.#single(await this.#request('deleteUser', 'DELETE', this.#paths.userByCode(code)), normalizeUser);
  }

  /** 3. */
  async getUser(code: string): Promise<Envelope<User>> {
    return this.#single(await this.#request('getUser', 'GET', this.#paths.user, { query: { code } }), normalizeUser);
  }

  /** 4. One per-item envelope per biometric item, in order. */
  async updateBiometrics(code: string, items: BiometricItem[]): Promise<Envelope<Envelope<null>[]>> {
    const path = this.#paths.biometric(code);
    return this.#items('updateBiometrics', path, await this.#request('updateBiometrics', 'POST', path, { body: items }), () => null);
  }

  /** 5. */
  async deleteBiometrics(code: string): Promise<Envelope<null>> {
    const env = await this.#request('deleteBiometrics', 'DELETE', this.#paths.biometric(code));
    return { ...env, returnValue: null };
  }

  /** 6. One per-item envelope per event, in order. `tzOffset` in minutes. */
  async addEvents(events: AttendanceEvent[], options: { signal?: AbortSignal } = {}): Promise<Envelope<Envelope<AttendanceEvent>[]>> {
    const path = this.#paths.event;
    const env = await this.#request('addEvents', 'POST', path, { body: events.map((e) => this.#wireEvent(e)), signal: options.signal });
    return this.#items('addEvents', path, env, this.#readEvent);
  }

  /** 7. */
  async deleteEvents(code: string, events: AttendanceEvent[]): Promise<Envelope<Envelope<AttendanceEvent>[]>> {
    const path = this.#paths.eventByCode(code);
    const env = await this.#request('deleteEvents', 'DELETE', path, { body: events.map((e) => this.#wireEvent(e)) });
    return this.#items('deleteEvents', path, env, this.#readEvent);
  }

  /** 8. `from`/`to` are `yyyy-MM-dd HH:mm:ss`, inclusive. */
  async getEvents(query: { code?: string; from: string; to: string }): Promise<Envelope<Envelope<AttendanceEvent>[]>> {
    const path = this.#paths.event;
    const env = await this.#request('getEvents', 'GET', path, { query: { code: query.code, from: query.from, to: query.to } });
    return this.#items('getEvents', path, env, this.#readEvent);
  }

  /** 9. Only under the `api` path form. Durations in minutes. */
  async workHourReport(query: {
    from: string;
    to: string;
    grouptype?: GroupType;
    groupcodes?: string[];
    shiftname?: string;
    pagenumber?: number;
    pagesize?: number;
  }): Promise<Envelope<WorkHourRow[]>> {
    const path = this.#paths.workHourReport;
    if (!path) {
      throw new AgentError(
        'API_NOT_SUPPORTED',
        'the work-hour report exists only under the /api/attendance path form',
        { operation: 'workHourReport', pathForm: this.options.pathForm },
        {
          hint: 'set api.pathForm to "api" to use the report',
        },
      );
    }
    const env = await this.#request('workHourReport', 'GET', path, {
      query: {
        from: query.from,
        to: query.to,
        grouptype: query.grouptype,
        groupcodes: query.groupcodes?.length ? query.groupcodes.join(',') : undefined,
        shiftname: query.shiftname,
        pagenumber: query.pagenumber,
        pagesize: query.pagesize,
      },
    });
    if (env.returnValue === null) return env as Envelope<WorkHourRow[]>;
    if (!Array.isArray(env.returnValue)) throw this.#badResponse('workHourReport', path, 200, 'the report should carry an array of rows');
    return { ...env, returnValue: env.returnValue.map((r) => normalizeWorkHourRow(r, this.options.tzOffsetUnit)) };
  }
}
