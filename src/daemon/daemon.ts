/**
 * The daemon: opens the terminal's database and outbox, builds the time authority, the punch
 * policy and the uploader with its sinks, then starts the components plugged in with `use()`
 * (scanners, ops, sd-notify, ...) in order, and stops them in reverse. With no component at all
 * it still drains the outbox: that is `edge-agent run` with zero scanners.
 *
 * Built in, in start order: the time authority (before anything reads or writes punches: its
 * first judgement corrects what it can before the uploader claims a batch, and the uploader and
 * the policy ask it from then on), retention (delivered punches older than
 * `outbox.retentionDays` are pruned at start and every hour) and the uploader (stopped last but
 * the authority, so in-flight batches finish or are released).
 */
import type { Logger } from '../core/logger.js';
import { logger } from '../core/logger.js';
import { toAgentError } from '../core/errors.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import { Outbox } from '../store/outbox.js';
import type { Sink } from '../upload/sink.js';
import { Uploader } from '../upload/uploader.js';
import type { AgentConfig } from '../config/config.js';
import { PunchPolicy } from '../terminal/punch-policy.js';
import { openAgentDatabase } from '../store/agent-db.js';
import type { Secrets } from '../config/secrets.js';
import { TimeAuthority, type TimeAuthorityOptions } from './time-authority.js';

export interface DaemonContext {
  config: AgentConfig;
  secrets: Secrets;
  db: SqliteDatabase;
  outbox: Outbox;
  uploader: Uploader;
  policy: PunchPolicy;
  /** The time authority: whether the clock is trusted, steps, corrections. */
  time: TimeAuthority;
  log: Logger;
}

export interface DaemonComponent {
  name: string;
  start(ctx: DaemonContext): Promise<void>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  config: AgentConfig;
  secrets: Secrets;
  /** Sinks to use instead of those built from `config.upstream` (tests, the embedded default). */
  sinks?: Sink[];
  /**
   * False for a short-lived process beside the real daemon's job (enroll, identify without a
   * running daemon): no uploader is started, so nothing about delivery is touched and no upstream
   * has to be configured. Punches recorded meanwhile wait for the daemon.
   */
  deliver?: boolean;
  /** How long in-flight batches may finish on stop before they are released. Default 5 s. */
  stopGraceMs?: number;
  idlePollMs?: number;
  /** Overrides for the time authority (tests: sources, clocks, boot id, tick). */
  clock?: Partial<Omit<TimeAuthorityOptions, 'db' | 'outbox'>>;
}

const HOUR = 3_600_000;

/** Opens `<dataDir>/agent.db` and the outbox on it with the config's sinks and limits. */
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

export class Daemon {
  readonly options: DaemonOptions;
  readonly log = logger('agent:daemon');
  readonly #components: DaemonComponent[] = [];
  readonly #started: DaemonComponent[] = [];
  #ctx: DaemonContext | null = null;
  #pruneTimer: NodeJS.Timeout | null = null;
  #stopping: Promise<void> | null = null;
  #timeStarted = false;

  constructor(options: DaemonOptions) {
    this.options = options;
  }

  /** Adds a component; components start in the order added. */
  use(component: DaemonComponent): this {
    this.#components.push(component);
    return this;
  }

  get context(): DaemonContext | null {
    return this.#ctx;
  }

  async start(): Promise<DaemonContext> {
    const { config, secrets } = this.options;
    const deliver = this.options.deliver !== false;
    // Imported here: the sinks pull in the MQTT client, which `punch` and `queue` (openOutbox) never use.
    const sinks = this.options.sinks ?? (deliver ? (await import('./upstreams.js')).createSinks(config, secrets) : []);
    const { db, outbox } = await openOutbox(config);
    const time = TimeAuthority.fromConfig(config, db, outbox, this.options.clock);
    const uploader = new Uploader({
      outbox,
      sinks,
      gate: time,
      batchSize: config.outbox.batchSize,
      backoffBaseMs: config.outbox.backoffBaseMs,
      backoffCapMs: config.outbox.backoffCapMs,
      ...(this.options.stopGraceMs !== undefined ? { stopGraceMs: this.options.stopGraceMs } : {}),
      ...(this.options.idlePollMs !== undefined ? { idlePollMs: this.options.idlePollMs } : {}),
    });
    const policy = PunchPolicy.fromConfig(config, outbox, time);
    const ctx: DaemonContext = { config, secrets, db, outbox, uploader, policy, time, log: this.log };
    this.#ctx = ctx;
    time.on('settled', () => uploader.wake());
    try {
      await time.start();
      this.#timeStarted = true;
      await this.#prune();
      if (deliver) await uploader.start();
      for (const c of this.#components) {
        await c.start(ctx);
        this.#started.push(c);
        this.log.debug({ component: c.name }, 'component started');
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.#pruneTimer = setInterval(() => void this.#prune(), HOUR);
    this.#pruneTimer.unref();
    const st = await outbox.status();
    this.log.info(
      {
        terminal: config.terminal.id,
        upstream: config.upstream,
        pending: st.pending,
        dead: st.dead,
        components: this.#components.map((c) => c.name),
      },
      'edge-agent running',
    );
    return ctx;
  }

  async #prune(): Promise<void> {
    const ctx = this.#ctx;
    if (!ctx) return;
    try {
      const n = await ctx.outbox.prune(ctx.config.outbox.retentionDays);
      if (n > 0) this.log.info({ pruned: n, retentionDays: ctx.config.outbox.retentionDays }, 'pruned delivered punches past retention');
    } catch (err) {
      this.log.warn({ err: toAgentError(err).toJSON() }, 'pruning delivered punches failed; will try again in an hour');
    }
  }

  /** Stops components in reverse order, then the uploader (finishing or releasing batches), the time authority, the database. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    if (this.#pruneTimer) clearInterval(this.#pruneTimer);
    for (const c of [...this.#started].reverse()) {
      try {
        await c.stop();
      } catch (err) {
        this.log.error({ err: toAgentError(err).toJSON(), component: c.name }, 'component failed to stop cleanly');
      }
    }
    this.#started.length = 0;
    const ctx = this.#ctx;
    if (!ctx) return;
    await ctx.uploader.stop();
    if (this.#timeStarted) await ctx.time.stop();
    await ctx.db.close();
    this.log.info('edge-agent stopped');
  }
}
