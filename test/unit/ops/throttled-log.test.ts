import { describe, expect, it } from 'vitest';
import { ThrottledLog } from '../../../src/ops/throttled-log.js';
import type { Logger } from '../../../src/core/logger.js';

function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  return { log: { warn: at('warn'), error: at('error'), info: at('info') } as unknown as Logger, lines };
}

describe('lines an outsider can multiply are throttled', () => {
  it('a flood of 100,000 refused commands in 100 s writes at most the burst per window, each later line with the count left out', () => {
    const { log, lines } = recorder();
    let t = 0;
    const refusals = new ThrottledLog(log, { burst: 10, windowMs: 10_000, now: () => t });
    let written = 0;
    for (let i = 0; i < 100_000; i++, t += 1) if (refusals.warn({ command: 'ping', i }, 'command answered with an error')) written++;
    expect(written).toBe(lines.length);
    expect(lines).toHaveLength(100); // 10 windows of 10 s, 10 lines each
    expect(lines.slice(0, 10).every((l) => l.fields.suppressed === undefined && l.msg === 'command answered with an error')).toBe(true);
    expect(lines[10]!.fields).toMatchObject({ command: 'ping', i: 10_000, suppressed: 9_990 });
    expect(lines[10]!.msg).toBe(
      'command answered with an error (and 9990 more like it left out since the last line: more than 10 in 10 s)',
    );
    // Every refusal is either a line or in a line's count, but those after the last line.
    const counted = lines.reduce((n, l) => n + 1 + ((l.fields.suppressed as number | undefined) ?? 0), 0);
    expect(counted + refusals.suppressed).toBe(100_000);
  });

  it('writes every line while they are few, at the level asked', () => {
    const { log, lines } = recorder();
    let t = 0;
    const noted = new ThrottledLog(log, { burst: 3, windowMs: 1000, now: () => t });
    for (let i = 0; i < 6; i++, t += 400) noted.write(i % 2 ? 'error' : 'warn', { i }, 'refused');
    expect(lines.map((l) => [l.level, l.fields.i, l.fields.suppressed])).toEqual([
      ['warn', 0, undefined],
      ['error', 1, undefined],
      ['warn', 2, undefined],
      ['error', 3, undefined],
      ['warn', 4, undefined],
      ['error', 5, undefined],
    ]);
  });
});
