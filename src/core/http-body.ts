/**
 * The body of an HTTP request, read with limits, for every server of ours (the attendance
 * service, the console, the daemon's control socket). A failure is an AgentError whose code says
 * what went wrong, so each caller maps it to its own answer (HTTP status, envelope, code):
 *
 * | code | when |
 * |---|---|
 * | CORE_HTTP_BODY_TYPE | `contentType` is given and the request's Content-Type does not match it (nothing is read) |
 * | CORE_HTTP_BODY_TOO_LARGE | Content-Length says more than `maxBytes` (nothing is read), or the bytes counted pass it |
 * | CORE_HTTP_BODY_TIMEOUT | the body has not ended within `timeoutMs` |
 * | CORE_HTTP_BODY_ABORTED | the client closed (or was cut by a server timeout) before its body ended |
 * | CORE_HTTP_BODY_NOT_JSON | `readJsonBody`: the body is empty (`context.empty`) or not JSON |
 *
 * A body over the limit is never buffered: the reader stops listening and keeps nothing, and what
 * the client still sends is left to the caller (the service closes the connection after its
 * answer; see server/http.ts). The stream is not destroyed, so an answer can still be written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentError } from './errors.js';

export interface BodyLimits {
  /** The largest body taken, in bytes. */
  maxBytes: number;
  /** How long the whole body may take once reading starts (ms); none when left out. */
  timeoutMs?: number;
  /** The Content-Type the body must have (tested against the header); any when left out. */
  contentType?: RegExp;
  /**
   * Answers `Expect: 100-continue` on this response once the body is known to be within the limit
   * (a server with a 'checkContinue' listener must say continue itself; Node does it otherwise).
   */
  continueOn?: ServerResponse;
}

export interface JsonBodyLimits extends BodyLimits {
  /** What an empty body reads as; without it an empty body is CORE_HTTP_BODY_NOT_JSON. */
  whenEmpty?: unknown;
}

/** The whole body as bytes, or an AgentError with one of the codes above. */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const { maxBytes, timeoutMs, contentType } = limits;
  if (contentType && !contentType.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(
      new AgentError(
        'CORE_HTTP_BODY_TYPE',
        `the body's Content-Type is ${JSON.stringify((req.headers['content-type'] ?? '(none)').slice(0, 100))}, not ${contentType.source}`,
        { expected: contentType.source },
      ),
    );
  }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return Promise.reject(tooLarge(maxBytes));
  if (limits.continueOn && /^100-continue$/i.test(req.headers.expect ?? '')) limits.continueOn.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = timeoutMs === undefined ? null : setTimeout(() => fail(timedOut(timeoutMs)), timeoutMs);
    const stop = () => {
      if (timer) clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (err: Error) => {
      stop();
      chunks.length = 0;
      reject(err);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
      else fail(tooLarge(maxBytes));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => fail(aborted(err));
    const onClose = () => fail(aborted());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The body parsed as JSON (any JSON value), with the limits of `readBody`. */
export async function readJsonBody(req: IncomingMessage, limits: JsonBodyLimits): Promise<unknown> {
  const raw = await readBody(req, limits);
  if (raw.length === 0) {
    if ('whenEmpty' in limits) return limits.whenEmpty;
    throw new AgentError('CORE_HTTP_BODY_NOT_JSON', 'the body is empty; send JSON', { empty: true });
  }
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch (err) {
    throw new AgentError(
      'CORE_HTTP_BODY_NOT_JSON',
      `the body is not valid JSON: ${(err as Error).message}`,
      { empty: false },
      { cause: err },
    );
  }
}

function tooLarge(maxBytes: number): AgentError {
  return new AgentError('CORE_HTTP_BODY_TOO_LARGE', `the request body is over ${maxBytes} bytes`, { maxBytes });
}

function timedOut(timeoutMs: number): AgentError {
  return new AgentError('CORE_HTTP_BODY_TIMEOUT', `the request body did not arrive within ${timeoutMs} ms`, { timeoutMs });
}

function aborted(cause?: Error): AgentError {
  return new AgentError(
    'CORE_HTTP_BODY_ABORTED',
    `the client went away before its body arrived${cause ? `: ${cause.message}` : ''}`,
    {},
    cause ? { cause } : {},
  );
}
