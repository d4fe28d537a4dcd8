import { describe, expect, it } from 'vitest';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { z } from 'zod';
import { AgentError } from '../../../src/core/errors.js';
import { callDaemon, ControlServer, isDaemonListening } from '../../../src/daemon/control-socket.js';

describe('control socket', () => {
  it('streams progress then the result over a 0600 Unix socket, and carries errors with their code', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ctl-')), 'control.sock');
    const server = new ControlServer(path)
      .handle('ping', async () => ({ pong: true }))
      .handle(
        'count',
        async (body, progress) => {
          for (let i = 1; i <= body.to; i++) progress({ step: i });
          return { counted: body.to };
        },
        z.strictObject({ to: z.number().int().min(1).max(10) }),
      )
      .handle('fail', async () => {
        throw new AgentError('ENROLL_DUPLICATE', 'already enrolled to E2', {}, { hint: 'use another finger' });
      });
    await server.start();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await isDaemonListening(path)).toBe(true);
    const steps: unknown[] = [];
    expect(await callDaemon(path, 'count', { to: 3 }, (e) => steps.push(e.step))).toEqual({ counted: 3 });
    expect(steps).toEqual([1, 2, 3]);
    await expect(callDaemon(path, 'fail', {})).rejects.toMatchObject({ code: 'ENROLL_DUPLICATE', hint: 'use another finger' });
    await expect(callDaemon(path, 'nope', {})).rejects.toMatchObject({ code: 'AGENT_CONTROL_UNKNOWN' });
    // Bodies are checked against the action's schema before the handler sees them.
    await expect(callDaemon(path, 'count', { to: 1e9 })).rejects.toMatchObject({
      code: 'AGENT_CONTROL_BAD_REQUEST',
      message: expect.stringContaining('"to"'),
    });
    await expect(callDaemon(path, 'count', { to: 2, extra: 'x' })).rejects.toMatchObject({ code: 'AGENT_CONTROL_BAD_REQUEST' });
    await expect(callDaemon(path, 'ping', { anything: 1 })).rejects.toMatchObject({ code: 'AGENT_CONTROL_BAD_REQUEST' });
    await expect(callDaemon(path, 'count', { to: 'x'.repeat(70_000) })).rejects.toMatchObject({
      code: 'AGENT_CONTROL_BAD_REQUEST',
      message: expect.stringContaining('over 65536 bytes'),
    });
    expect(steps).toEqual([1, 2, 3]);
    // A second daemon on the same data folder is refused.
    await expect(new ControlServer(path).start()).rejects.toMatchObject({ code: 'AGENT_ALREADY_RUNNING' });
    await server.stop();
    expect(await isDaemonListening(path)).toBe(false);
    await expect(callDaemon(path, 'ping', {})).rejects.toMatchObject({ code: 'AGENT_CONTROL_UNREACHABLE' });
  });

  it('aborts the handler when the client goes away before the answer (a Ctrl-C on the command)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ctl-')), 'control.sock');
    let sawAbort: (why: string) => void;
    const aborted = new Promise<string>((r) => (sawAbort = r));
    let finishedSignal: AbortSignal | null = null;
    const server = new ControlServer(path)
      .handle('wait', async (_body, progress, signal) => {
        progress({ step: 'waiting' });
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        sawAbort('aborted');
        return null;
      })
      .handle('quick', async (_body, _progress, signal) => {
        finishedSignal = signal;
        return { ok: true };
      });
    await server.start();
    try {
      // A finished call does not abort its handler's signal.
      expect(await callDaemon(path, 'quick', {})).toEqual({ ok: true });
      await new Promise((r) => setTimeout(r, 50));
      expect(finishedSignal!.aborted).toBe(false);
      // The client reads the first progress line and hangs up.
      const req = request({ socketPath: path, method: 'POST', path: '/wait', headers: { 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => req.destroy());
      });
      req.on('error', () => undefined);
      req.end('{}');
      expect(await aborted).toBe('aborted');
    } finally {
      await server.stop();
    }
  });
});
