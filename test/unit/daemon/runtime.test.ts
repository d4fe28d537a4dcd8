import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.js';
import { emptySecrets } from '../../../src/config/secrets.js';
import { AgentError } from '../../../src/core/errors.js';
import { MAX_PROBLEMS_PER_KIND, TerminalRuntime } from '../../../src/daemon/runtime.js';
import type { ScannerWorker } from '../../../src/terminal/scanner-worker.js';

function runtime(): TerminalRuntime {
  const config = parseConfig({ dataDir: mkdtempSync(join(tmpdir(), 'runtime-')) });
  return new TerminalRuntime(config, { ...emptySecrets(), sources: {} });
}

describe('the terminal runtime tells the truth about what is wrong now', () => {
  it('a scanner error holds while it is gone and is cleared when it is back; the newest error that holds is the last one', async () => {
    const rt = runtime();
    const worker = { key: 'r30x:/dev/fp0', status: 'disconnected', info: null } as unknown as ScannerWorker;
    rt.workers.set(worker.key, worker);
    rt.noteError(new AgentError('AGENT_SCANNER_DISCONNECTED', 'r30x:/dev/fp0: unplugged'), 'scanner:r30x:/dev/fp0');
    let m = await rt.metrics();
    expect(m).toMatchObject({
      health: 'degraded',
      degraded: ['scanner r30x:/dev/fp0 disconnected'],
      lastError: 'AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged',
    });
    expect(m.scanners).toEqual([
      { key: 'r30x:/dev/fp0', status: 'disconnected', family: null, error: 'AGENT_SCANNER_DISCONNECTED: r30x:/dev/fp0: unplugged' },
    ]);
    expect(Date.parse(m.lastErrorAt as string)).toBeGreaterThan(Date.now() - 5000);

    rt.noteError(new AgentError('API_TIMEOUT', 'api: no answer'), 'upload:api');
    expect(rt.lastError?.message).toBe('API_TIMEOUT: api: no answer');

    (worker as { status: string }).status = 'ready';
    rt.resolve('scanner:r30x:/dev/fp0');
    m = await rt.metrics();
    expect(m).toMatchObject({ health: 'degraded', degraded: ['API_TIMEOUT: api: no answer'], lastError: 'API_TIMEOUT: api: no answer' });

    rt.resolve('upload:api');
    m = await rt.metrics();
    expect(m).toMatchObject({ health: 'ok', degraded: [], lastError: null, lastErrorAt: null });
  });

  it('a refused capture holds until that scanner records a punch again; a module placement error is a last error, not degraded', () => {
    const rt = runtime();
    rt.noteCapture({
      scanner: 'sim:r30x',
      path: 'host',
      employeeCode: 'E1',
      score: 50,
      result: 'refused',
      latencyMs: 5,
      detail: 'STORE_OUTBOX_FULL: outbox full',
    });
    expect(rt.health([])).toEqual({
      state: 'degraded',
      reasons: [{ code: 'PUNCH_NOT_RECORDED', message: 'STORE_OUTBOX_FULL: outbox full' }],
    });
    rt.noteCapture({ scanner: 'sim:r30x', path: 'host', employeeCode: null, score: null, result: 'try-again', latencyMs: 5 });
    expect(rt.health([]).state).toBe('degraded');
    rt.noteCapture({ scanner: 'sim:r30x', path: 'host', employeeCode: 'E1', score: 50, result: 'punched', latencyMs: 5 });
    expect(rt.health([])).toEqual({ state: 'online', reasons: [] });

    rt.noteError(new AgentError('DRIVER_R30X_FLASH', 'flash error'), 'modules:sim:r30x');
    expect(rt.health([{ code: 'CLOCK_HELD_LONG' }])).toEqual({
      state: 'degraded',
      reasons: [{ code: 'TERMINAL_ALERT', message: 'alert CLOCK_HELD_LONG' }],
    });
    expect(rt.lastError?.source).toBe('modules:sim:r30x');
  });

  it('keeps a bounded number of problems named from the wire, and a flood of them pushes out none that degrade the terminal', async () => {
    const rt = runtime();
    rt.noteError(new AgentError('API_TIMEOUT', 'api: no answer'), 'upload:api');
    // Garbage published on 20,000 template topics: each a record that could not be applied.
    for (let i = 0; i < 20_000; i++) rt.noteError(new AgentError('OPS_SYNC_MALFORMED', 'not a sealed record'), `site:E${i}`);
    const problems = rt.problems();
    expect(problems.filter((p) => p.source.startsWith('site:'))).toHaveLength(MAX_PROBLEMS_PER_KIND);
    expect(problems.at(-1)!.source).toBe('site:E19999'); // the newest are kept
    expect(problems.map((p) => p.source)).toContain('upload:api');
    const m = await rt.metrics();
    expect(m).toMatchObject({
      health: 'degraded',
      degraded: ['API_TIMEOUT: api: no answer'],
      lastError: 'OPS_SYNC_MALFORMED: not a sealed record',
    });
  });
});
