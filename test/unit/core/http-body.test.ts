/** The one HTTP body reader, over real HTTP on 127.0.0.1: limits, time, type, JSON, a client gone. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type BodyLimits, type JsonBodyLimits, readBody, readJsonBody } from '../../../src/core/http-body.js';
import type { AgentError } from '../../../src/core/errors.js';
import { until } from '../../helpers/poll.js';

let server: Server | null = null;
async function closeServer(): Promise<void> {
  const s = server;
  server = null;
  if (s) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
}
afterEach(closeServer);

/**
 * A server whose handler reads the body with `read` and answers 200 with what it read, or 400
 * with the error's code; `seen` gets each outcome.
 */
async function serve(
  read: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
  withCheckContinue = false,
): Promise<{ port: number; outcomes: Array<{ value?: unknown; error?: AgentError }> }> {
  const outcomes: Array<{ value?: unknown; error?: AgentError }> = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    read(req, res).then(
      (value) => {
        outcomes.push({ value });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ value: Buffer.isBuffer(value) ? value.toString() : value }));
      },
      (error: AgentError) => {
        outcomes.push({ error });
        if (!res.destroyed) res.writeHead(400, { connection: 'close', 'content-length': error.code.length }).end(error.code);
      },
    );
  };
  server = createServer(handler);
  if (withCheckContinue) server.on('checkContinue', handler);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, outcomes };
}

/** Writes raw bytes, reads until the server closes or `waitMs`; `closeAfterMs` hangs up early. */
function raw(port: number, text: string, opts: { waitMs?: number; closeAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(text));
    s.setEncoding('utf8');
    s.on('data', (c: string) => (got += c));
    const done = () => {
      s.destroy();
      resolve(got);
    };
    s.on('close', done);
    s.on('error', done);
    if (opts.closeAfterMs !== undefined) setTimeout(done, opts.closeAfterMs);
    setTimeout(done, opts.waitMs ?? 3000);
  });
}

describe('readBody', () => {
  const post = (body: string, headers = '') =>
    `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${headers}\r\n${body}`;

  it('reads a body of exactly the limit', async () => {
    const { port, outcomes } = await serve((req) => readBody(req, { maxBytes: 5 }));
    expect(await raw(port, post('héllo'.slice(0, 4)))).toMatch(/^HTTP\/1\.1 200 /);
    expect((outcomes[0]!.value as Buffer).toString('utf8')).toBe('héll');
  });

  it('refuses a Content-Length over the limit before reading, and does not say continue', async () => {
    const limits: BodyLimits = { maxBytes: 10 };
    const { port, outcomes } = await serve((req, res) => readBody(req, { ...limits, continueOn: res }), true);
    const over = await raw(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n');
    expect(over).toMatch(/^HTTP\/1\.1 400 /);
    expect(over).not.toContain('100 Continue');
    expect(outcomes[0]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_TOO_LARGE', context: { maxBytes: 10 } });
    expect(outcomes[0]!.error!.message).toBe('the request body is over 10 bytes');
    const within = await raw(
      port,
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nok',
    );
    expect(within).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  it('counts a chunked body and stops at the limit, keeping nothing, and the answer still reaches the client', async () => {
    const { port, outcomes } = await serve((req) => readBody(req, { maxBytes: 8 }));
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const answer = await raw(
      port,
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk('12345')}${chunk('67890')}${chunk('more')}0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*CORE_HTTP_BODY_TOO_LARGE$/);
    expect(outcomes).toHaveLength(1);
  });

  it('refuses another Content-Type before reading', async () => {
    const { port, outcomes } = await serve((req) => readBody(req, { maxBytes: 100, contentType: /^application\/json\b/ }));
    await raw(port, post('{}', 'Content-Type: text/plain\r\n'));
    expect(outcomes[0]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_TYPE' });
    expect(outcomes[0]!.error!.message).toContain('"text/plain"');
    await raw(port, post('{}', 'Content-Type: application/json; charset=utf-8\r\n'));
    expect((outcomes[1]!.value as Buffer).toString()).toBe('{}');
  });

  it('gives up on a body that does not arrive in time', async () => {
    const { port, outcomes } = await serve((req) => readBody(req, { maxBytes: 100, timeoutMs: 200 }));
    const started = Date.now();
    const answer = await raw(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    expect(answer).toMatch(/CORE_HTTP_BODY_TIMEOUT$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(outcomes[0]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_TIMEOUT', context: { timeoutMs: 200 } });
  });

  it('says when the client went away before its body arrived', async () => {
    const { port, outcomes } = await serve((req) => readBody(req, { maxBytes: 100 }));
    await raw(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc', { closeAfterMs: 100 });
    await until('the reader gave up', () => outcomes.length === 1);
    expect(outcomes[0]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_ABORTED', retryable: true });
  });
});

describe('readJsonBody', () => {
  const post = (body: string) =>
    `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  const limits: JsonBodyLimits = { maxBytes: 1000 };

  it('parses any JSON value', async () => {
    const { port, outcomes } = await serve((req) => readJsonBody(req, limits));
    await raw(port, post('{"a":[1,2]}'));
    await raw(port, post('[true]'));
    expect(outcomes.map((o) => o.value)).toEqual([{ a: [1, 2] }, [true]]);
  });

  it('says whether the body was empty or not JSON; an empty body may stand for a value', async () => {
    const { port, outcomes } = await serve((req) => readJsonBody(req, limits));
    await raw(port, post(''));
    await raw(port, post('{"a":'));
    expect(outcomes[0]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_NOT_JSON', context: { empty: true } });
    expect(outcomes[0]!.error!.message).toBe('the body is empty; send JSON');
    expect(outcomes[1]!.error).toMatchObject({ code: 'CORE_HTTP_BODY_NOT_JSON', context: { empty: false } });
    expect(outcomes[1]!.error!.message).toMatch(/^the body is not valid JSON: /);
    await closeServer();
    const empty = await serve((req) => readJsonBody(req, { ...limits, whenEmpty: { none: true } }));
    await raw(empty.port, post(''));
    expect(empty.outcomes[0]!.value).toEqual({ none: true });
  });
});
