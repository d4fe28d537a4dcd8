/**
 * A component of the daemon, and the context the components share. Every part of a running
 * agent is a component listed in wiring.ts: the daemon starts them in that order and stops them
 * in reverse (daemon.ts). A component hands what it built to the ones after it through the
 * context (`provide`), so the order in wiring.ts is the dependency order: the outbox (the
 * database) first, the time authority next, ...
 *
 * Tested in test/unit/daemon/daemon.test.ts (components start in order and stop in reverse; the
 * recording ones stop after the ones that punch) and test/unit/daemon/wiring.test.ts (the order).
 */
import type { AgentConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { AgentError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { SqliteDatabase } from '../core/sqlite.js';
import type { Outbox } from '../store/outbox.js';
import type { PunchPolicy } from '../terminal/punch-policy.js';
import type { Uploader } from '../upload/uploader.js';
import type { TimeAuthority } from '../terminal/time-authority.js';

export interface DaemonComponent {
  name: string;
  start(ctx: DaemonContext): Promise<void>;
  stop(): Promise<void>;
}

/** What the recording components provide, by name. */
export interface DaemonParts {
  /** The terminal's database (`<dataDir>/agent.db`). */
  db: SqliteDatabase;
  outbox: Outbox;
  /** The time authority: whether the clock is trusted, steps, corrections. */
  time: TimeAuthority;
  uploader: Uploader;
  policy: PunchPolicy;
}

export class DaemonContext {
  readonly config: AgentConfig;
  readonly secrets: Secrets;
  readonly log: Logger;
  readonly #parts: Partial<DaemonParts> = {};

  constructor(config: AgentConfig, secrets: Secrets, log: Logger) {
    this.config = config;
    this.secrets = secrets;
    this.log = log;
  }

  /** A component hands what it built to the components after it. */
  provide<K extends keyof DaemonParts>(name: K, part: DaemonParts[K]): void {
    this.#parts[name] = part;
  }

  /** Whether a part has been provided (a component before this one started it). */
  has(name: keyof DaemonParts): boolean {
    return this.#parts[name] !== undefined;
  }

  #part<K extends keyof DaemonParts>(name: K): DaemonParts[K] {
    const part = this.#parts[name];
    if (part === undefined)
      throw new AgentError(
        'INTERNAL',
        `the daemon's ${name} is asked for before the component that provides it started`,
        { part: name },
        { hint: 'this is a bug in edge-agent (the order of src/daemon/wiring.ts): report it with the log lines around it' },
      );
    return part;
  }

  get db(): SqliteDatabase {
    return this.#part('db');
  }

  get outbox(): Outbox {
    return this.#part('outbox');
  }

  get time(): TimeAuthority {
    return this.#part('time');
  }

  get uploader(): Uploader {
    return this.#part('uploader');
  }

  get policy(): PunchPolicy {
    return this.#part('policy');
  }
}
