/** What `edge-agent doctor` prints: the report (`--json` prints it as it is) and its text for a person. */
import type { CheckResult } from './check.js';
import type { ClockFigures } from './clock.js';

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
  /** The clock as the time authority judges it, with the terminal's database; absent without one. */
  clock?: ClockFigures;
}

/** The report for a person: one line a check, the hint under each warn and fail. */
export function formatReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.name.length));
  const lines: string[] = [];
  for (const c of report.checks) {
    lines.push(`${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.hint && c.status !== 'pass') lines.push(`${' '.repeat(width + 8)}→ ${c.hint}`);
  }
  const fails = report.checks.filter((c) => c.status === 'fail').length;
  const warns = report.checks.filter((c) => c.status === 'warn').length;
  lines.push('', report.ok ? `healthy${warns ? ` (${warns} warning${warns > 1 ? 's' : ''})` : ''}` : `${fails} check(s) failed`);
  return `${lines.join('\n')}\n`;
}
