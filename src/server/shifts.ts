/**
 * The shifts the work-hour report computes against, from the service's shifts file (JSON or
 * YAML):
 *
 * ```yaml
 * defaultShift: GENERAL
 * shifts:
 *   - { name: GENERAL, start: "09:00", end: "17:00", breakMinutes: 60 }
 *   - { name: NIGHT,   start: "22:00", end: "06:00", breakMinutes: 30 }   # ends the next day
 * ```
 *
 * An event without a shift is stored with the default shift.
 */
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import { AgentError } from '../core/errors.js';

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day as HH:MM');

export const ShiftSchema = z.object({
  name: z.string().min(1).max(64),
  start: hhmm,
  end: hhmm,
  breakMinutes: z.number().int().min(0).default(0),
});

export const ShiftsConfigSchema = z
  .object({
    defaultShift: z.string().min(1),
    shifts: z.array(ShiftSchema).min(1),
  })
  .superRefine((cfg, ctx) => {
    const names = new Set<string>();
    for (const s of cfg.shifts) {
      if (names.has(s.name)) ctx.addIssue({ code: 'custom', message: `shift "${s.name}" is defined twice`, path: ['shifts'] });
      names.add(s.name);
      const length = shiftLengthMinutes(toMinutes(s.start), toMinutes(s.end));
      if (s.breakMinutes >= length)
        ctx.addIssue({
          code: 'custom',
          message: `shift "${s.name}": breakMinutes ${s.breakMinutes} is not shorter than the shift (${length} min)`,
          path: ['shifts'],
        });
    }
    if (!names.has(cfg.defaultShift))
      ctx.addIssue({ code: 'custom', message: `defaultShift "${cfg.defaultShift}" is not one of the shifts`, path: ['defaultShift'] });
  });

export type ShiftsConfig = z.input<typeof ShiftsConfigSchema>;

/** A shift with its times in minutes after midnight. */
export interface Shift {
  name: string;
  startMin: number;
  endMin: number;
  breakMinutes: number;
  /** Scheduled length, break included; a shift whose end is not after its start ends the next day. */
  lengthMin: number;
}

export interface Shifts {
  defaultShift: string;
  byName: Map<string, Shift>;
}

export const DEFAULT_SHIFTS: ShiftsConfig = {
  defaultShift: 'GENERAL',
  shifts: [{ name: 'GENERAL', start: '09:00', end: '17:00', breakMinutes: 60 }],
};

function toMinutes(hhmmText: string): number {
  const [h, m] = hhmmText.split(':').map(Number) as [number, number];
  return h * 60 + m;
}

function shiftLengthMinutes(start: number, end: number): number {
  return end > start ? end - start : end + 1440 - start;
}

/** Validates a shifts configuration; `SERVER_SHIFTS_INVALID` names the problem. */
export function parseShifts(raw: unknown, source = 'shifts'): Shifts {
  const parsed = ShiftsConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : '(top level)';
    throw new AgentError(
      'SERVER_SHIFTS_INVALID',
      `${source}: ${where}: ${issue.message}`,
      { source, path: issue.path.join('.') },
      {
        hint: 'the shifts file holds {defaultShift, shifts: [{name, start: "HH:MM", end: "HH:MM", breakMinutes}]}',
      },
    );
  }
  const byName = new Map<string, Shift>();
  for (const s of parsed.data.shifts) {
    const startMin = toMinutes(s.start);
    const endMin = toMinutes(s.end);
    byName.set(s.name, { name: s.name, startMin, endMin, breakMinutes: s.breakMinutes, lengthMin: shiftLengthMinutes(startMin, endMin) });
  }
  return { defaultShift: parsed.data.defaultShift, byName };
}

/** Reads and validates a shifts file (JSON or YAML). */
export function loadShiftsFile(file: string): Shifts {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AgentError(
      'SERVER_SHIFTS_INVALID',
      `cannot read the shifts file ${file}: ${(err as Error).message}`,
      { file },
      { hint: 'check the path given to --shifts', cause: err },
    );
  }
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new AgentError(
      'SERVER_SHIFTS_INVALID',
      `the shifts file ${file} is neither JSON nor YAML: ${(err as Error).message}`,
      { file },
      { hint: 'fix the syntax at the position named', cause: err },
    );
  }
  return parseShifts(raw, file);
}
