import { describe, expect, it } from 'vitest';
import { RepeatedWarning } from '../../../src/core/repeated-warning.js';
import type { Logger } from '../../../src/core/logger.js';

function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const log = {
    warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', fields, msg }),
    info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', fields, msg }),
  } as unknown as Logger;
  return { log, lines };
}

describe('repeated warnings back off and say how many were left out', () => {
  it('a broker away for a day: every 2 s a failure, a few dozen lines, each with the count', () => {
    const { log, lines } = recorder();
    let t = 0;
    const w = new RepeatedWarning(log, { now: () => t });
    for (; t < 86_400_000; t += 2000) w.warn({ url: 'mqtt://b' }, 'MQTT error: connect ECONNREFUSED');
    expect(w.failures).toBe(43_200);
    expect(lines.length).toBeLessThan(40);
    expect(lines[0]!.msg).toBe('MQTT error: connect ECONNREFUSED; next such warning in 1 min at the earliest');
    expect(lines[1]!.msg).toMatch(
      /^MQTT error: connect ECONNREFUSED \(29 more like it left out since the last line; 31 in all\); next such warning in 1 min/,
    );
    expect(lines[2]!.msg).toMatch(/next such warning in 2 min/);
    expect(lines.at(-1)!.msg).toMatch(/next such warning in 60 min/);
    // Every failure is in one line's count, but those after the last line (at most an hour's: 1,800).
    const counted = lines.reduce((n, l) => n + 1 + (l.fields.suppressed as number), 0);
    expect(counted).toBeLessThanOrEqual(43_200);
    expect(43_200 - counted).toBeLessThan(1800);
  });

  it('says once when it works again, and the next failure is logged at once', () => {
    const { log, lines } = recorder();
    let t = 0;
    const w = new RepeatedWarning(log, { now: () => t });
    w.warn({}, 'lost the broker');
    t += 1000;
    w.warn({}, 'lost the broker');
    w.ok({}, 'connected to the broker again');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'lost the broker; next such warning in 1 min at the earliest'],
      ['info', 'connected to the broker again after 2 failure(s)'],
    ]);
    w.ok({}, 'connected');
    expect(lines).toHaveLength(2);
    t += 1000;
    w.warn({}, 'lost the broker');
    expect(lines).toHaveLength(3);
  });
});
