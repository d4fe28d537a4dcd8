/**
 * The outbox component, first of all: opens the terminal's database (`<dataDir>/agent.db`) and
 * the outbox on it with the config's sinks and limits, prunes delivered punches older than
 * `outbox.retentionDays` at start and every hour, and closes the database last of all.
 *
 * Tested in test/unit/daemon/daemon.test.ts (with no other component the daemon still drains the
 * outbox) and test/integration/cli-management.test.ts.
 */
import type { AgentConfig } from '../../config/config.js';
import { toAgentError } from '../../core/errors.js';
import type { SqliteDatabase } from '../../core/sqlite.js';
import { openAgentDatabase } from '../../store/agent-db.js';
import { Outbox } from '../../store/outbox.js';
import type { DaemonComponent, DaemonContext } from '../component.js';

const HOUR = 3_600_000;

/** Opens `<dataDir>/agent.db` and the outbox on it with the config's sinks and limits (also for CLI commands beside a daemon). */
export async function openOutbox(config: AgentConfig): Promise<{ db: SqliteDatabase; outbox: Outbox }> {
  const db = await openAgentDatabase(config.dataDir);
  try {
    const outbox = await Outbox.open(db, { sinks: config.upstream, maxPending: config.outbox.maxPending });
    return { db, outbox };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

export class OutboxComponent implements DaemonComponent {
  readonly name = 'outbox';
  #db: SqliteDatabase | null = null;
  #timer: NodeJS.Timeout | null = null;

  async start(ctx: DaemonContext): Promise<void> {
    const { db, outbox } = await openOutbox(ctx.config);
    this.#db = db;
    ctx.provide('db', db);
    ctx.provide('outbox', outbox);
    const prune = async () => {
      const days = ctx.config.outbox.retentionDays;
      try {
        const n = await outbox.prune(days);
        if (n > 0) ctx.log.info({ pruned: n, retentionDays: days }, 'pruned delivered punches past retention');
      } catch (err) {
        ctx.log.warn({ err: toAgentError(err).toJSON() }, 'pruning delivered punches failed; will try again in an hour');
      }
    };
    await prune();
    this.#timer = setInterval(() => void prune(), HOUR);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#db?.close();
    this.#db = null;
  }
}
