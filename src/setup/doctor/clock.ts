/**
 * The clock check: whether the terminal's time can be trusted, and with its database the time
 * authority's view (the latest time trusted, the last step, the punches held for the clock).
 */
import { existsSync } from 'node:fs';
import type { AgentConfig } from '../../config/config.js';
import { SqliteDatabase } from '../../core/sqlite.js';
import { clockSources, DEFAULT_SOURCES, detectClock, type ClockState } from '../../terminal/clock-sources.js';
import { clockReport } from '../clock-report.js';
import { clockAlerts, type Alert } from '../../ops/alerts.js';
import { agentDatabasePath } from '../../store/agent-db.js';
import { type HeldStatus, Outbox } from '../../store/outbox.js';
import { type CheckResult, fromError, pass, warn } from './check.js';

/** The figures behind the clock check, for --json (`clock` beside `checks`). */
export interface ClockFigures {
  trusted: boolean;
  source: string;
  lastTrustedAt: string | null;
  steps: number;
  lastStep: { sizeSec: number; at: string } | null;
  held: HeldStatus;
  alerts: Alert[];
}

/**
 * The clock as the time authority judges it: the sources, and (with the terminal's database) the
 * latest time already trusted, the last step seen and the punches held for the clock.
 */
export async function checkClock(detect?: () => Promise<ClockState>, options: { config?: AgentConfig | null } = {}): Promise<CheckResult> {
  return (await checkClockFigures(detect, options.config ?? null)).result;
}

/** The clock check and, with the terminal's database, the figures behind it (doctor --json `clock`). */
export async function checkClockFigures(
  detect: (() => Promise<ClockState>) | undefined,
  config: AgentConfig | null,
): Promise<{ result: CheckResult; figures?: ClockFigures }> {
  const name = 'clock';
  const path = config ? agentDatabasePath(config.dataDir) : null;
  if (!config || !path || !existsSync(path)) {
    const s = await (detect ?? (() => detectClock({ sources: config ? clockSources(config.clock.sources) : DEFAULT_SOURCES })))();
    if (s.synchronized && s.source !== 'assumed') return { result: pass(name, s.detail) };
    if (s.synchronized)
      return {
        result: warn(name, s.detail, 'enable time synchronization (timedatectl set-ntp true) so the terminal can tell a wrong clock'),
      };
    return {
      result: warn(
        name,
        `${s.detail}; punches are marked and corrected once it synchronizes, nothing is lost`,
        'check NTP: timedatectl timesync-status; the terminal needs UDP port 123 to an NTP server',
      ),
    };
  }
  let db: SqliteDatabase | null = null;
  try {
    db = await SqliteDatabase.open(path);
    const clock = await clockReport(db, config, detect ? { detect: () => detect() } : {});
    const held = (await (await Outbox.open(db, { sinks: config.upstream })).status({ anchoredBoots: clock.anchoredBoots })).held;
    const alerts = clockAlerts({ held, holdAlertHours: config.outbox.unsyncedHoldHours, clockDetail: clock.detail });
    const step = clock.lastStep
      ? `last step ${clock.lastStep.sizeSec > 0 ? '+' : ''}${clock.lastStep.sizeSec} s at ${clock.lastStep.at} (${clock.steps} seen)`
      : 'no step seen';
    const heldText = `${held.clock} punch(es) held for the clock, ${held.earlierBoot} of an earlier boot waiting for a decision, ${held.review} for review`;
    const figures: ClockFigures = {
      trusted: clock.trusted,
      source: clock.source,
      lastTrustedAt: clock.lastTrustedAt,
      steps: clock.steps,
      lastStep: clock.lastStep,
      held,
      alerts,
    };
    const detail = `${clock.trusted ? 'trusted' : 'NOT TRUSTED'}: ${clock.detail}; ${heldText}; ${step}`;
    if (alerts.length)
      return {
        result: warn(name, `${detail}; ${alerts.map((a) => `${a.code}: ${a.message}`).join('; ')}`, alerts.map((a) => a.hint).join('; ')),
        figures,
      };
    if (!clock.trusted)
      return {
        result: warn(
          name,
          `${detail}; punches are marked and held until their time is corrected, nothing is lost`,
          clock.source === 'seen'
            ? 'the clock went back: check NTP (timedatectl timesync-status); punches wait until it passes the time already seen'
            : 'check NTP: timedatectl timesync-status; the terminal needs UDP port 123 to an NTP server',
        ),
        figures,
      };
    if (clock.source === 'assumed')
      return {
        result: warn(name, detail, 'enable time synchronization (timedatectl set-ntp true) so the terminal can tell a wrong clock'),
        figures,
      };
    return { result: pass(name, detail), figures };
  } catch (err) {
    return { result: fromError(name, err, 'see the database check') };
  } finally {
    await db?.close().catch(() => undefined);
  }
}
