/**
 * The MQTT event payload as the terminals publish it (src/upload/mqtt-sink.ts `eventPayload`,
 * docs/operator.md): `{id, terminal, site, employeeCode, direction, time, tzOffset, inTime, shift,
 * source, score, clockSynced, clockCorrected, recordedAt}`. Checked before anything is done with
 * it: bounded size, JSON, the fields an attendance event needs, in range, the employee code by
 * the shared rule. Fields this version
 * does not know are ignored (a newer terminal may send more).
 */
import { z } from 'zod';
import { parseDateTime } from '../api/date-time.js';
import { checkEmployeeCode } from '../api/employee-code.js';
import type { AttendanceEvent } from '../api/types.js';
import { toAttendanceEvent } from '../upload/api-sink.js';

/** Larger messages are refused unread (a punch is ~350 bytes). */
export const MAX_PAYLOAD_BYTES = 16 * 1024;

/** The form here; whether the date exists (no February 30) is checked after the schema: a refine in the schema costs 6× the rest of it. */
const dateTime = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'a date-time yyyy-MM-dd HH:mm:ss');

const PayloadSchema = z.object({
  id: z.string().min(1).max(64),
  terminal: z.string().max(128).nullish(),
  site: z.string().max(128).nullish(),
  /** Bounded here; the shared rule (src/api/employee-code.ts) is applied after the schema. */
  employeeCode: z.string().min(1).max(512),
  direction: z.enum(['in', 'out']),
  time: dateTime,
  /** Minutes east of UTC, as the outbox keeps it. */
  tzOffset: z.number().int().min(-840).max(840),
  inTime: dateTime.nullish(),
  shift: z.string().max(64).nullish(),
  recordedAt: z.string().max(64).nullish(),
});

export interface IngestEvent {
  /** The punch's id (a ULID): repeats are dropped by it. */
  id: string;
  event: AttendanceEvent;
  /** When the terminal recorded the punch (UTC ms), for the lag; null when absent or unreadable. */
  recordedAtMs: number | null;
  terminal: string | null;
}

export type ParsedPayload = { ok: true; value: IngestEvent } | { ok: false; reason: string };

export function parsePayload(payload: Buffer): ParsedPayload {
  if (payload.length > MAX_PAYLOAD_BYTES)
    return { ok: false, reason: `the message has ${payload.length} bytes, more than ${MAX_PAYLOAD_BYTES}` };
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    return { ok: false, reason: `the message is not JSON: ${(err as Error).message}` };
  }
  const parsed = PayloadSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `${issue.path.join('.') || '(message)'}: ${issue.message}` };
  }
  const p = parsed.data;
  if (parseDateTime(p.time) === undefined) return { ok: false, reason: `time: ${p.time} is not a date-time that exists` };
  if (p.inTime && parseDateTime(p.inTime) === undefined) return { ok: false, reason: `inTime: ${p.inTime} is not a date-time that exists` };
  // The rule terminals and the service share: a code that breaks it is a dead letter here instead
  // of a request the service refuses; a code sent decomposed goes on in NFC, as the service keeps it.
  const code = checkEmployeeCode(p.employeeCode);
  if (!code.ok) return { ok: false, reason: `employeeCode: ${code.problem}` };
  const recorded = p.recordedAt ? Date.parse(p.recordedAt) : NaN;
  return {
    ok: true,
    value: {
      id: p.id,
      event: toAttendanceEvent({
        employeeCode: code.code,
        direction: p.direction,
        localTime: p.time,
        tzOffset: p.tzOffset,
        inTime: p.inTime ?? null,
        shift: p.shift ?? null,
      }),
      recordedAtMs: Number.isNaN(recorded) ? null : recorded,
      terminal: p.terminal ?? null,
    },
  };
}
