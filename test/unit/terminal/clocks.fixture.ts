/**
 * In-memory clocks for the time authority's unit tests (and the suites that run one): the true
 * time advances the wall and the monotonic clock together; `off` is how far the wall clock is
 * wrong; `boot` the boot id. With the year rule as the only source (what a container says).
 */
import { join } from 'node:path';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { Outbox } from '../../../src/store/outbox.js';
import { detectClock } from '../../../src/terminal/clock-sources.js';
import { TimeAuthority, type TimeAuthorityOptions } from '../../../src/terminal/time-authority.js';

/** A terminal's clocks for the authority: the true time advances both; `off` is how far the wall clock is wrong. */
export function fakeClocks(start = Date.UTC(2026, 5, 1, 8, 0, 0)) {
  const c = { t: start, off: 0, mono: 5_000_000, boot: 'boot-1' };
  return {
    c,
    advance(ms: number) {
      c.t += ms;
      c.mono += ms;
    },
    wallNow: () => c.t + c.off,
    monoNow: () => c.mono,
    bootId: () => c.boot,
  };
}

/** A database and an outbox in `dir`/`name`. */
export async function openStore(dir: string, name: string) {
  const db = await openAgentDatabase(join(dir, name));
  const outbox = await Outbox.open(db);
  return { db, outbox };
}

/** The year rule and no time service: what a container or a fresh Pi says. */
export const yearOnly = (wallMs: number) => detectClock({ now: wallMs, sources: [] });

/** An authority on the fake clocks (year rule only). */
export function authority(
  db: SqliteDatabase,
  outbox: TimeAuthorityOptions['outbox'],
  clocks: ReturnType<typeof fakeClocks>,
  extra: Partial<TimeAuthorityOptions> = {},
): TimeAuthority {
  return new TimeAuthority({
    db,
    outbox,
    detect: yearOnly,
    wallNow: clocks.wallNow,
    monoNow: clocks.monoNow,
    bootId: clocks.bootId,
    ...extra,
  });
}
