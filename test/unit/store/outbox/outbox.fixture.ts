/** What the outbox's unit tests share besides the database (../agent-db.fixture.ts): a punch to record. */
import type { PunchInput } from '../../../../src/store/outbox.js';

/** A synchronized check-in (or check-out) of `code` at 2026-03-01 08:00:00 +01:00, manual, on terminal t1. */
export function punch(code: string, direction: 'in' | 'out' = 'in', extra: Partial<PunchInput> = {}): PunchInput {
  return { employeeCode: code, direction, localTime: '2026-03-01 08:00:00', tzOffset: 60, source: 'manual', terminalId: 't1', ...extra };
}
