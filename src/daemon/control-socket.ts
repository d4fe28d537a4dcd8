/**
 * The daemon's local control socket: HTTP over a Unix socket at `<dataDir>/control.sock`
 * (mode 0600, so only the agent's user and root reach it). `edge-agent enroll` and
 * `edge-agent identify` use it while the daemon runs, because the daemon holds the scanners.
 *
 * A request is `POST /<action>` with a JSON body; the answer streams NDJSON lines:
 * `{"type": "progress", ...}` any number of times, then one `{"type": "result", ...}` or
 * `{"type": "error", "error": {code, message, hint}}`.
 *
 * Every action declares its body as a schema (bounded; unknown members refused); a body over
 * 64 KiB, not complete within 30 s, not a JSON object, or not passing the schema is
 * `AGENT_CONTROL_BAD_REQUEST` and the handler never sees it.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentError, isAgentError, isErrorCode, toAgentError } from '../core/errors.js';
import { readJsonBody } from '../core/http-body.js';
import { logger } from '../core/logger.js';
import { eachLine } from './lines.js';

/** `signal` aborts when the client goes away before the answer (a Ctrl-C on `edge-agent enroll`). */
export type ControlHandler<B = Record<string, unknown>> = (
  body: B,
  progress: (event: Record<string, unknown>) => void,
  signal: AbortSignal,
) => Promise<unknown>;

/** The body of an action that takes nothing. */
export const EMPTY_BODY = z.strictObject({});

const log = logger('agent:control');
const MAX_BODY = 64 * 1024;
/** The CLI sends its body in one write: one that has not arrived in this time never will. */
const BODY_TIMEOUT_MS = 30_000;

export function controlSocketPath(dataDir: string): string {
  return join(dataDir, 'control.sock');
}

/**
 * The action's body: a JSON object (an empty body is `{}`), at most MAX_BODY bytes, arrived within
 * BODY_TIMEOUT_MS; anything else is AGENT_CONTROL_BAD_REQUEST.
 */
async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let v: unknown;
  try {
    v = await readJsonBody(req, { maxBytes: MAX_BODY, timeoutMs: BODY_TIMEOUT_MS, whenEmpty: {} });
  } catch (err) {
    if (isAgentError(err, 'CORE_HTTP_BODY_TOO_LARGE'))
      throw new AgentError('AGENT_CONTROL_BAD_REQUEST', `request body over ${MAX_BODY} bytes`);
    if (isAgentError(err, 'CORE_HTTP_BODY_TIMEOUT'))
      throw new AgentError('AGENT_CONTROL_BAD_REQUEST', `the request body did not arrive within ${BODY_TIMEOUT_MS} ms`);
    if (!isAgentError(err, 'CORE_HTTP_BODY_NOT_JSON')) throw err;
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new AgentError('AGENT_CONTROL_BAD_REQUEST', 'the request body must be a JSON object');
}

export class ControlServer {
  readonly #handlers = new Map<string, { handler: ControlHandler<never>; body: z.ZodType }>();
  #server: Server | null = null;
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** Serves `POST /<action>`; its body must pass `body` (nothing by default). */
  handle<S extends z.ZodType = typeof EMPTY_BODY>(action: string, handler: ControlHandler<z.output<S>>, body?: S): this {
    this.#handlers.set(action, { handler: handler as ControlHandler<never>, body: body ?? EMPTY_BODY });
    return this;
  }

  async start(): Promise<void> {
    if (existsSync(this.path)) {
      // A socket left by a killed daemon; a live daemon would answer.
      if (await isDaemonListening(this.path)) {
        throw new AgentError(
          'AGENT_ALREADY_RUNNING',
          `another edge-agent is running on this data folder (${this.path} answers)`,
          { path: this.path },
          { hint: 'stop it first (systemctl stop edge-agent) or use another --data folder' },
        );
      }
      unlinkSync(this.path);
    }
    const server = createServer((req, res) => void this.#serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.path, () => resolve());
    });
    chmodSync(this.path, 0o600);
    this.#server = server;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('content-type', 'application/x-ndjson');
    const write = (obj: Record<string, unknown>) => res.write(`${JSON.stringify(obj)}\n`);
    // The client hung up before the handler finished (a Ctrl-C on the command): tell the handler.
    const gone = new AbortController();
    let answered = false;
    res.on('close', () => {
      if (!answered) gone.abort();
    });
    try {
      const action = (req.url ?? '/').replace(/^\//, '').split('?')[0]!.slice(0, 64);
      const entry = this.#handlers.get(action);
      if (req.method !== 'POST' || !entry) {
        throw new AgentError(
          'AGENT_CONTROL_UNKNOWN',
          `unknown control action ${req.method} /${action}`,
          { action },
          { hint: `known: ${[...this.#handlers.keys()].join(', ')}` },
        );
      }
      const body = entry.body.safeParse(await readBody(req));
      if (!body.success) {
        const why = body.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.length ? `"${i.path.join('.')}"` : 'body'}: ${i.message}`)
          .join('; ');
        throw new AgentError('AGENT_CONTROL_BAD_REQUEST', `bad request for ${action}: ${why}`, { action });
      }
      const result = await entry
        .handler(body.data as never, (event) => write({ type: 'progress', ...event }), gone.signal)
        .finally(() => (answered = true));
      write({ type: 'result', result: result ?? null });
    } catch (err) {
      const e = toAgentError(err, 'AGENT_CONTROL_FAILED');
      log.warn({ code: e.code, err: e.message }, 'control request failed');
      write({ type: 'error', error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}), context: e.context } });
    }
    res.end();
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}

/** True when a daemon answers on the socket. */
export function isDaemonListening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    if (!existsSync(path)) return resolve(false);
    const req = request({ socketPath: path, method: 'POST', path: '/ping', timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end('{}');
  });
}

/** Calls an action on the daemon; `onProgress` sees each progress line; resolves to the result. */
export function callDaemon(
  path: string,
  action: string,
  body: Record<string, unknown>,
  onProgress: (event: Record<string, unknown>) => void = () => undefined,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: path, method: 'POST', path: `/${action}` }, (res) => {
      let done = false;
      eachLine(res, (line) => {
        if (!line.trim()) return;
        const msg = JSON.parse(line) as {
          type: string;
          result?: unknown;
          error?: { code: string; message: string; hint?: string; context?: Record<string, unknown> };
        } & Record<string, unknown>;
        if (msg.type === 'progress') onProgress(msg);
        else if (msg.type === 'result') {
          done = true;
          resolve(msg.result);
        } else if (msg.type === 'error' && msg.error) {
          done = true;
          reject(
            new AgentError(
              isErrorCode(msg.error.code) ? msg.error.code : 'AGENT_CONTROL_FAILED',
              msg.error.message,
              msg.error.context ?? {},
              msg.error.hint ? { hint: msg.error.hint } : {},
            ),
          );
        }
      });
      res.on('end', () => {
        if (!done) reject(new AgentError('AGENT_CONTROL_FAILED', 'the daemon closed the control connection without an answer', { action }));
      });
    });
    req.on('error', (err) =>
      reject(
        new AgentError(
          'AGENT_CONTROL_UNREACHABLE',
          `cannot reach the daemon at ${path}: ${err.message}`,
          { path },
          { hint: 'is edge-agent run running on this data folder?', cause: err },
        ),
      ),
    );
    req.end(JSON.stringify(body));
  });
}
