import { describe, expect, it } from 'vitest';
import { fail, pass, warn } from '../../../../src/setup/doctor/check.js';
import { formatReport } from '../../../../src/setup/doctor/report.js';

describe("doctor's report for a person", () => {
  it('one line a check with the names aligned, the hint under each warn and fail, then the verdict', () => {
    const text = formatReport({
      ok: false,
      checks: [
        pass('config', 'c.yaml is valid'),
        warn('template-key', 'no database yet', 'start the agent'),
        fail('disk', 'full', 'free space'),
      ],
    });
    expect(text).toBe(
      [
        'PASS  config        c.yaml is valid',
        'WARN  template-key  no database yet',
        '                    → start the agent',
        'FAIL  disk          full',
        '                    → free space',
        '',
        '1 check(s) failed',
        '',
      ].join('\n'),
    );
  });

  it('healthy, with the number of warnings when there are any', () => {
    expect(formatReport({ ok: true, checks: [pass('a', 'x')] })).toMatch(/\n\nhealthy\n$/);
    expect(formatReport({ ok: true, checks: [warn('a', 'x', 'h')] })).toMatch(/\n\nhealthy \(1 warning\)\n$/);
    expect(formatReport({ ok: true, checks: [warn('a', 'x', 'h'), warn('b', 'y', 'h')] })).toMatch(/healthy \(2 warnings\)\n$/);
  });
});
