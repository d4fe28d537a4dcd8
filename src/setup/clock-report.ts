/**
 * The clock as `edge-agent queue status` and `edge-agent doctor` show it to a technician: judged
 * now by the time authority's rule (src/terminal/clock-sources.ts) with what the terminal
 * remembers (src/store/clock-store.ts), read beside a running daemon or without one. Here, not in
 * src/cli, because doctor (src/setup) shows it too and may not import the CLI.
 */
import type { AgentConfig } from '../config/config.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { currentBootId } from '../store/boot-id.js';
import { ClockStore } from '../store/clock-store.js';
import { clockSources, type ClockState, DEFAULT_SOURCES, detectClock, judgeClock, wallClock } from '../terminal/clock-sources.js';
import { stepView } from '../terminal/time-authority.js';

export interface ClockReport {
  trusted: boolean;
  source: string;
  detail: string;
  /** The latest time trusted on this terminal (ISO). */
  lastTrustedAt: string | null;
  steps: number;
  /** The last step seen: signed size in seconds, and the clock just after it (ISO). */
  lastStep: { sizeSec: number; at: string } | null;
  /** Earlier boots with a trusted reading: their held punches are corrected, not waiting for a decision. */
  anchoredBoots: string[];
}

export async function clockReport(
  db: SqliteDatabase,
  config: Pick<AgentConfig, 'clock'> | null,
  options: { detect?: (wallMs: number) => Promise<ClockState>; wallNow?: () => number; bootId?: string } = {},
): Promise<ClockReport> {
  const store = await ClockStore.open(db);
  const rec = await store.read();
  const wall = (options.wallNow ?? wallClock())();
  const sources = config ? clockSources(config.clock.sources) : DEFAULT_SOURCES;
  const state = await (options.detect ?? ((now: number) => detectClock({ now, sources })))(wall);
  const j = judgeClock(state, wall, rec.lastTrustedMs, (config?.clock.stepThresholdSec ?? 2) * 1000);
  const boot = options.bootId ?? currentBootId();
  return {
    trusted: j.trusted,
    source: j.source,
    detail: j.detail,
    lastTrustedAt: rec.lastTrustedMs === null ? null : new Date(rec.lastTrustedMs).toISOString(),
    steps: rec.steps,
    lastStep: stepView(rec.lastStep),
    anchoredBoots: [...(await store.anchors()).keys()].filter((b) => b !== boot),
  };
}
