/**
 * The daemon: the lifecycle of the components wiring.ts lists. It starts them in order and stops
 * them in reverse; a component that fails to start stops the ones already started. With no
 * component added (`use`) it still runs the recording ones wiring.ts puts first (the outbox, the
 * time authority, the uploader, the punch policy) and drains the outbox: that is `edge-agent
 * run` with zero scanners, and what `punch`, `enroll` and `identify` open when no daemon runs
 * (with `deliver: false`).
 */
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { type DaemonComponent, DaemonContext } from './component.js';
import { type RecordingOptions, recordingComponents } from './wiring.js';

export interface DaemonOptions extends RecordingOptions {
  config: AgentConfig;
  secrets: Secrets;
}

export class Daemon {
  readonly options: DaemonOptions;
  readonly log = logger('agent:daemon');
  readonly #components: DaemonComponent[];
  readonly #started: DaemonComponent[] = [];
  #ctx: DaemonContext | null = null;
  #stopping: Promise<void> | null = null;

  constructor(options: DaemonOptions) {
    this.options = options;
    this.#components = recordingComponents(options);
  }

  /** Adds a component after those added before it (and after the recording ones). */
  use(component: DaemonComponent): this {
    this.#components.push(component);
    return this;
  }

  get context(): DaemonContext | null {
    return this.#ctx;
  }

  async start(): Promise<DaemonContext> {
    const { config, secrets } = this.options;
    const ctx = new DaemonContext(config, secrets, this.log);
    this.#ctx = ctx;
    try {
      for (const c of this.#components) {
        await c.start(ctx);
        this.#started.push(c);
        this.log.debug({ component: c.name }, 'component started');
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
    const st = await ctx.outbox.status();
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

  /** Stops the started components in reverse order: the uploader after all that punch (finishing or releasing its batches), the time authority, the database last. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const started = this.#started.length > 0;
    for (const c of [...this.#started].reverse()) {
      try {
        await c.stop();
      } catch (err) {
        this.log.error({ err: toAgentError(err).toJSON(), component: c.name }, 'component failed to stop cleanly');
      }
    }
    this.#started.length = 0;
    if (started) this.log.info('edge-agent stopped');
  }
}
