/**
 * Alerts: what a person must decide or fix, raised where operations and technicians look (the
 * `alerts` list of the metrics on MQTT, the fleet view, `edge-agent queue status`, doctor). Each
 * has a stable code, a sentence with the figures, and what to do.
 *
 * Clock alerts (issue: time you can trust without a real-time clock):
 * - CLOCK_EARLIER_BOOT_HELD: punches of an earlier boot taken with an untrusted clock, which no
 *   trusted reading of that boot can correct, wait for a decision (`clock.earlierBootPunches: hold`);
 * - CLOCK_HELD_LONG: punches of this boot have waited for a trusted clock longer than
 *   `outbox.unsyncedHoldHours` (measured on the monotonic clock);
 * - CLOCK_ORDER_REVIEW: check-outs found before their check-in were kept back for review.
 *
 * Tested in test/unit/terminal/time-authority.test.ts (punches of an earlier boot held raise
 * CLOCK_EARLIER_BOOT_HELD) and test/integration/clock-e2e.test.ts (the clock alerts of a running
 * terminal).
 */
import type { HeldStatus } from '../store/outbox.js';

export type AlertCode = 'CLOCK_EARLIER_BOOT_HELD' | 'CLOCK_HELD_LONG' | 'CLOCK_ORDER_REVIEW';

export interface Alert {
  code: AlertCode;
  message: string;
  hint: string;
}

function hours(sec: number): string {
  return sec < 7200 ? `${Math.round(sec / 60)} min` : `${Math.round(sec / 3600)} h`;
}

export function clockAlerts(input: { held: HeldStatus; holdAlertHours: number; clockDetail?: string | null }): Alert[] {
  const { held } = input;
  const out: Alert[] = [];
  if (held.earlierBoot > 0) {
    out.push({
      code: 'CLOCK_EARLIER_BOOT_HELD',
      message: `${held.earlierBoot} punch(es) of an earlier boot were taken while the clock was not trusted and no trusted time of that boot can correct them: held`,
      hint: 'decide: "edge-agent queue release-unsynced" sends them as they are, marked; or re-enter them with "edge-agent punch --at" and purge them',
    });
  }
  if (held.oldestClockSec !== null && held.oldestClockSec > input.holdAlertHours * 3600) {
    out.push({
      code: 'CLOCK_HELD_LONG',
      message: `${held.clock} punch(es) have waited ${hours(held.oldestClockSec)} for a trusted clock${input.clockDetail ? ` (${input.clockDetail})` : ''}`,
      hint: 'check time synchronization (timedatectl timesync-status, UDP port 123 to the NTP server); "edge-agent queue release-unsynced --all" sends them as they are, marked',
    });
  }
  if (held.review > 0) {
    out.push({
      code: 'CLOCK_ORDER_REVIEW',
      message: `${held.review} check-out(s) are before their check-in (a clock step or a mistyped time) and were not sent`,
      hint: 'look at them with "edge-agent queue list --dead", purge them and record the right punches with "edge-agent punch --at"',
    });
  }
  return out;
}
