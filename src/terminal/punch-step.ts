/**
 * The punch step: a recognized person handed to the punch policy (`PunchPolicy.present`, under
 * the credential rule), and the policy's answer turned into what the scanner worker reports and
 * shows: punched (with its direction), a duplicate, awaiting the second factor, denied by the
 * rule, or refused (the punch could not be recorded, e.g. the outbox is full). The policy records
 * the punch in the outbox durably before it answers, so the feedback that follows is true.
 */
import { toAgentError } from '../core/errors.js';
import type { Direction } from '../store/outbox.js';
import type { PunchPolicy, Presentation } from './punch-policy.js';

/** What became of a recognized person's punch. */
export interface PunchVerdict {
  result: 'punched' | 'duplicate' | 'awaiting' | 'denied' | 'refused';
  /** The direction recorded (punched). */
  direction?: Direction;
  /** Why nothing was recorded, in a sentence (duplicate, awaiting, denied, refused: `CODE: message`). */
  detail?: string;
}

export class PunchStep {
  readonly #policy: Pick<PunchPolicy, 'present'>;

  constructor(policy: Pick<PunchPolicy, 'present'>) {
    this.#policy = policy;
  }

  /** What becomes of this person's punch; never throws (a failure is `refused`). */
  async verdictFor(p: Presentation): Promise<PunchVerdict> {
    try {
      const r = await this.#policy.present(p);
      if (r.recorded) return { result: 'punched', direction: r.direction };
      if (r.reason === 'awaiting') return { result: 'awaiting', detail: `badge taken: the finger or eye within ${r.withinSec} s` };
      if (r.reason === 'not-accepted') return { result: 'denied', detail: r.detail };
      return { result: 'duplicate', detail: `${r.reason}: already recorded ${r.secondsAgo}s ago` };
    } catch (err) {
      const e = toAgentError(err, 'AGENT_PUNCH');
      return { result: 'refused', detail: `${e.code}: ${e.message}` };
    }
  }
}
