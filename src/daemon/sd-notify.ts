/**
 * sd_notify for `Type=notify`: READY=1, STATUS=..., WATCHDOG=1, STOPPING=1 to `$NOTIFY_SOCKET`.
 *
 * Node has no AF_UNIX datagram sockets and we add no native addon, so each message is sent by
 * spawning `systemd-notify VAR=VALUE...`, which ships with systemd on every host that has
 * `$NOTIFY_SOCKET` at all. The unit sets `NotifyAccess=all` because the sender is our child, not
 * the main process. systemd-notify then waits on a barrier (BARRIER=1 with a pipe the manager
 * closes once it has processed the message): without it, systemd-notify may exit before the
 * manager reads the datagram, the manager can no longer tell which unit the dead PID belonged
 * to, and drops the message (the classic systemd-notify race). A watchdog ping costs one short
 * process every WatchdogSec/2 (15 s with the shipped unit).
 *
 * Sending never throws: a failure is logged (warn) and reported as `false`. Without
 * `$NOTIFY_SOCKET` (not under systemd) every call is a no-op that resolves `false`.
 */
import { spawn } from 'node:child_process';
import { logger } from '../core/logger.js';
import { withTimeout } from '../core/time.js';

const log = logger('agent:sd-notify');

export interface SdNotifyOptions {
  /** Default `$NOTIFY_SOCKET`; null or empty disables notifications. */
  socket?: string | null;
  /** The sender program (default `systemd-notify`). */
  command?: string;
  /**
   * Wait for the manager to process each message (default true; `SD_NOTIFY_BARRIER=0` turns it
   * off, for a receiver that is not systemd and never closes the barrier pipe).
   */
  barrier?: boolean;
}

/** Keeps a STATUS= line a single line of reasonable length. */
function clean(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').slice(0, 200);
}

export class SdNotify {
  readonly socket: string | null;
  readonly #command: string;
  readonly #barrier: boolean;
  /** Messages go out one at a time, in order (READY before the first STATUS change). */
  #queue: Promise<unknown> = Promise.resolve();
  #missing = false;
  /** How many messages were sent successfully (for metrics and tests). */
  sent = 0;

  constructor(options: SdNotifyOptions = {}) {
    const s = options.socket === undefined ? process.env.NOTIFY_SOCKET : options.socket;
    this.socket = s ? s : null;
    this.#command = options.command ?? 'systemd-notify';
    this.#barrier = options.barrier ?? process.env.SD_NOTIFY_BARRIER !== '0';
  }

  get enabled(): boolean {
    return this.socket !== null && !this.#missing;
  }

  /** Sends `VAR=VALUE` pairs in one datagram; resolves true when the sender reported success. */
  send(fields: Record<string, string | number>): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const args = Object.entries(fields).map(([k, v]) => `${k}=${clean(String(v))}`);
    const next = this.#queue.then(() => this.#spawn(args));
    this.#queue = next;
    return next;
  }

  #spawn(args: string[]): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const argv = this.#barrier ? args : ['--no-block', ...args];
    return new Promise<boolean>((resolve) => {
      let stderr = '';
      const child = spawn(this.#command, argv, { env: { ...process.env, NOTIFY_SOCKET: this.socket! }, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') {
          this.#missing = true;
          log.warn({ command: this.#command }, `${this.#command} not found: systemd notifications (READY, WATCHDOG) are off; install systemd or run without Type=notify`);
        } else log.warn({ err: err.message }, 'cannot run systemd-notify');
        resolve(false);
      });
      child.on('close', (code) => {
        if (code === 0) {
          this.sent++;
          resolve(true);
        } else {
          log.warn({ code, stderr: stderr.trim(), message: args.join(' ').slice(0, 80) }, 'systemd-notify failed');
          resolve(false);
        }
      });
    });
  }

  ready(status?: string): Promise<boolean> {
    return this.send(status ? { READY: 1, STATUS: status } : { READY: 1 });
  }

  status(text: string): Promise<boolean> {
    return this.send({ STATUS: text });
  }

  watchdog(): Promise<boolean> {
    return this.send({ WATCHDOG: 1 });
  }

  stopping(status?: string): Promise<boolean> {
    return this.send(status ? { STOPPING: 1, STATUS: status } : { STOPPING: 1 });
  }

  /** Resolves once every message queued so far has been handled. */
  async flush(): Promise<void> {
    await this.#queue;
  }
}

/**
 * The watchdog ping interval systemd asks for: half of `$WATCHDOG_USEC`, only when
 * `$WATCHDOG_PID` is unset or is this process. Null when there is no watchdog.
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv = process.env, pid = process.pid): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isFinite(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.max(1, Math.floor(usec / 2000));
}

export interface SystemdNotifierOptions {
  notify?: SdNotify;
  env?: NodeJS.ProcessEnv;
  /** Text for STATUS= when ready (default "running"). */
  readyStatus?: () => string;
  /** A watchdog ping is sent only while this says the agent is healthy (default: always). */
  healthy?: () => boolean | Promise<boolean>;
  /** STATUS= sent with every watchdog ping (default: the outbox backlog, when started by the daemon). */
  status?: () => string | Promise<string>;
}

/** The part of the daemon's context the notifier reads. */
interface NotifierContext {
  config?: { terminal: { id: string }; upstream: readonly string[] };
  outbox?: { status(): Promise<{ pending: number; dead: number; unsynced: number }> };
}

/**
 * The daemon component that tells systemd the agent is ready (after every other component has
 * started: register it last), pings the watchdog from the event loop (a blocked loop means no
 * ping, and systemd restarts the agent), updates STATUS=, and says STOPPING on the way down.
 */
export class SystemdNotifier {
  readonly name = 'systemd';
  readonly notify: SdNotify;
  readonly #env: NodeJS.ProcessEnv;
  readonly #options: SystemdNotifierOptions;
  #timer: NodeJS.Timeout | null = null;
  #status: (() => string | Promise<string>) | undefined;

  constructor(options: SystemdNotifierOptions = {}) {
    this.#options = options;
    this.#status = options.status;
    this.#env = options.env ?? process.env;
    this.notify = options.notify ?? new SdNotify({ socket: this.#env.NOTIFY_SOCKET ?? null });
  }

  async start(ctx?: NotifierContext): Promise<void> {
    if (!this.notify.enabled) return;
    const outbox = ctx?.outbox;
    if (!this.#options.status && outbox) {
      this.#status = async () => {
        const s = await outbox.status();
        return `${s.pending} pending, ${s.dead} dead${s.unsynced ? `, ${s.unsynced} before clock sync` : ''}`;
      };
    }
    const interval = watchdogIntervalMs(this.#env);
    if (interval) {
      this.#timer = setInterval(() => void this.ping(), interval);
      this.#timer.unref();
    }
    const ready = this.#options.readyStatus?.() ?? (ctx?.config ? `running: terminal ${ctx.config.terminal.id}, upstream ${ctx.config.upstream.join('+')}` : 'running');
    await this.notify.ready(ready);
    log.info({ watchdogMs: interval }, 'told systemd the agent is ready');
  }


  /** One watchdog ping (with STATUS= when there is a status), withheld while the agent reports itself unhealthy. */
  async ping(): Promise<boolean> {
    if (this.#options.healthy && !(await this.#options.healthy())) {
      log.warn('agent unhealthy: watchdog ping withheld, systemd will restart the agent if this lasts');
      return false;
    }
    // The status is a courtesy: a slow database (a long import holding it) must not delay the
    // ping, or systemd would restart an agent that is merely busy.
    let status: string | null = null;
    try {
      status = this.#status ? await withTimeout(Promise.resolve(this.#status()), 1000) : null;
    } catch {
      status = null;
    }
    return status ? this.notify.send({ WATCHDOG: 1, STATUS: status }) : this.notify.watchdog();
  }

  status(text: string): Promise<boolean> {
    return this.notify.status(text);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.notify.stopping('stopping');
    await this.notify.flush();
  }
}
