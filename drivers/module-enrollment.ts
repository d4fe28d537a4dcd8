/**
 * The press loop of a fingerprint module's own enrolment, the same for every family: before each
 * press the person is told what to do (place the finger, place it again, lift it), a press the
 * module did not take (a poor image, a finger lifted too soon, presses that do not agree) is asked
 * again while the earlier ones are kept, up to `retries` more tries a press, and a finger that
 * stays on the sensor between presses (pressed again before the lift was seen) is asked to lift
 * once more instead of ending the enrolment. The family says how to wait, how to read a press and
 * where to go back to when the module forgot the earlier presses (a GT-521 after presses of
 * different fingers).
 *
 * Tested in test/unit/drivers/gt521/scanner.test.ts (three presses with lifts in between; a press
 * nobody makes) and test/integration/enroll-guided.test.ts (a finger put back before the lift, a
 * press the module did not take, every try failing).
 */
import { AgentError, toAgentError } from '../src/core/errors.js';
import type { ModuleEnrollOptions, PressPrompt } from './scanner.js';

export interface PressSteps {
  presses: number;
  options: ModuleEnrollOptions;
  /** How long a press (and a lift) may take (ms). */
  pressTimeoutMs: number;
  /** Waits until a finger is on the sensor; false when none came within `timeoutMs` (or on abort). */
  placed(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Waits until the sensor is free; false when the finger stayed for `timeoutMs` (or on abort). */
  lifted(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Reads press `step` (1-based) into the module; throws when the module did not take it. */
  read(step: number): Promise<void>;
  /** After a press the module did not take: the press to ask next (default: the same one). */
  restartAt?(err: AgentError, step: number): Promise<number>;
  /** The error when no finger came for press `step`. */
  noFinger(step: number): AgentError;
}

/** Errors of one press that another press can cure; a lost line or a full module cannot. */
export function pressCanBeRetried(err: AgentError): boolean {
  return err.retryable && !/TRANSPORT|DISCONNECT|DRIVER_TIMEOUT|CLOSED|NOT_OPEN/.test(err.code);
}

/** First reminder to lift after this long; the rest of the press timeout after the reminder. */
const LIFT_REMINDER_MS = 4000;

/** The signal's reason when it is an error, else CORE_ABORTED. */
function aborted(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new AgentError('CORE_ABORTED', 'the module enrolment was cancelled', {}, { hint: 'run the enrolment again' });
}

export async function enrollByPresses(s: PressSteps): Promise<void> {
  const { presses, options } = s;
  const { signal } = options;
  const retries = options.retries ?? 2;
  const prompt = (p: Omit<PressPrompt, 'of'>) => {
    if (signal?.aborted) throw aborted(signal);
    options.onPrompt?.({ ...p, of: presses });
  };
  const tries = new Map<number, number>();
  const lift = async (press: number) => {
    prompt({ press, action: 'lift' });
    if (await s.lifted(Math.min(LIFT_REMINDER_MS, s.pressTimeoutMs), signal)) return;
    prompt({ press, action: 'lift', reason: 'the finger is still on the sensor' });
    if (await s.lifted(s.pressTimeoutMs, signal)) return;
    if (signal?.aborted) throw aborted(signal);
    throw new AgentError(
      'DRIVER_FINGER_NOT_LIFTED',
      `the finger stayed on the sensor after press ${press} of ${presses}`,
      { press, of: presses },
      { hint: 'lift the finger off the sensor between presses, then place it again when asked', retryable: true },
    );
  };
  let reason: string | undefined;
  for (let step = 1; step <= presses; ) {
    prompt(reason ? { press: step, action: 'again', reason } : { press: step, action: 'place' });
    if (!(await s.placed(s.pressTimeoutMs, signal))) throw signal?.aborted ? aborted(signal) : s.noFinger(step);
    try {
      await s.read(step);
    } catch (err) {
      const e = toAgentError(err);
      const tried = (tries.get(step) ?? 0) + 1;
      tries.set(step, tried);
      if (!pressCanBeRetried(e)) throw e;
      if (tried > retries) {
        throw new AgentError(
          e.code,
          `press ${step} of ${presses} was not taken in ${tried} tries: ${e.message}`,
          { ...e.context, press: step, of: presses, tries: tried },
          { hint: e.hint, retryable: true, cause: e },
        );
      }
      reason = e.message;
      await lift(step);
      if (s.restartAt) step = await s.restartAt(e, step);
      continue;
    }
    reason = undefined;
    options.onStep?.(step);
    if (step < presses) await lift(step);
    step++;
  }
}
