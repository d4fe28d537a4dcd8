/**
 * sd_notify for `Type=notify`: READY=1, STATUS=..., WATCHDOG=1, STOPPING=1 to `$NOTIFY_SOCKET`.
 *
 * Each message is one datagram on an AF_UNIX socket sent by this process, through the `unix-dgram`
 * addon (Node has no AF_UNIX datagram sockets of its own; the addon is an optional dependency, as
 * in zigbee2mqtt). The sender is the main process, so the unit can say `NotifyAccess=main`, and a
 * watchdog ping costs three system calls (socket, sendto, close), not a process. No socket is held
 * between messages, so nothing here keeps the process alive or needs closing.
 *
 * Where the addon is missing (npm install found no C++ compiler), or `$NOTIFY_SOCKET` is one the
 * addon cannot address (an abstract `@name`, or longer than sun_path), each message is sent by
 * spawning `systemd-notify VAR=VALUE...` instead. Those messages come from a child, so that unit
 * needs `NotifyAccess=all` (install-service and the .deb's postinst write a drop-in saying so
 * where the addon does not load with the unit's node), and
 * systemd-notify waits on a barrier (BARRIER=1 with a pipe the manager closes once it has processed
 * the message): without it, systemd-notify may exit before the manager reads the datagram, the
 * manager can no longer tell which unit the dead PID belonged to, and drops the message.
 *
 * Sending never throws: a failure is logged (warn when it starts or changes, info when sending
 * works again) and reported as `false`. Without `$NOTIFY_SOCKET` (not under systemd) every call is
 * a no-op that resolves `false`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { getSystemErrorName } from 'node:util';
import { logger } from '../core/logger.js';
import { withTimeout } from '../core/time.js';

const log = logger('agent:sd-notify');

/** The part of the `unix-dgram` addon this module and its tests use (the package has no types). */
export interface UnixDgramSocket {
  on(event: 'message', listener: (msg: Buffer) => void): this;
  on(event: 'error', listener: (err: Error & { code?: number | string }) => void): this;
  on(event: 'listening', listener: () => void): this;
  bind(path: string): void;
  send(buf: Buffer, offset: number, length: number, path: string, callback: (err?: Error & { code?: number | string }) => void): void;
  close(): void;
}

export interface UnixDgram {
  createSocket(type: 'unix_dgram'): UnixDgramSocket;
}

let addon: UnixDgram | null | undefined;

/** The `unix-dgram` addon, or null where it is not installed (it is an optional dependency). */
export function unixDgram(): UnixDgram | null {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)('unix-dgram') as UnixDgram;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** sun_path holds 108 bytes with the terminating NUL; the addon copies the path as a C string. */
function addressable(socket: string): boolean {
  return !socket.startsWith('@') && Buffer.byteLength(socket) < 108;
}

export interface SdNotifyOptions {
  /** Default `$NOTIFY_SOCKET`; null or empty disables notifications. */
  socket?: string | null;
  /** The datagram addon (default: `unix-dgram` where installed); null sends through `command`. */
  dgram?: UnixDgram | null;
  /** The sender program where there is no addon (default `systemd-notify`). */
  command?: string;
  /**
   * systemd-notify only: wait for the manager to process each message (default true;
   * `SD_NOTIFY_BARRIER=0` turns it off, for a receiver that is not systemd and never closes the
   * barrier pipe).
   */
  barrier?: boolean;
}

/** Keeps a STATUS= line a single line of reasonable length. */
function clean(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').slice(0, 200);
}

/** Errors of a receive queue that is full for now. */
const BUSY = new Set(['EAGAIN', 'EWOULDBLOCK', 'ENOBUFS']);

/** An addon error's errno (a negative number) as its name: -2 → ENOENT. */
function errnoName(err: Error & { code?: number | string }): string {
  if (typeof err.code === 'number' && err.code < 0) {
    try {
      return getSystemErrorName(err.code);
    } catch {
      return String(err.code);
    }
  }
  return err.message;
}

export class SdNotify {
  readonly socket: string | null;
  /** How messages go out: a datagram from this process, or a spawned systemd-notify. */
  readonly via: 'socket' | 'systemd-notify';
  readonly #dgram: UnixDgram | null;
  readonly #command: string;
  readonly #barrier: boolean;
  /** Why messages go through systemd-notify (for its error message). */
  readonly #why: string;
  /** Messages go out one at a time, in order (READY before the first STATUS change). */
  #queue: Promise<unknown> = Promise.resolve();
  #missing = false;
  /** The failure last logged at warn, so a dead socket is not a warning every watchdog period. */
  #failing: string | null = null;
  /** How many messages were sent successfully (for metrics and tests). */
  sent = 0;

  constructor(options: SdNotifyOptions = {}) {
    const s = options.socket === undefined ? process.env.NOTIFY_SOCKET : options.socket;
    this.socket = s ? s : null;
    const dgram = options.dgram === undefined ? unixDgram() : options.dgram;
    this.#dgram = dgram && this.socket && addressable(this.socket) ? dgram : null;
    this.via = this.#dgram ? 'socket' : 'systemd-notify';
    this.#why = !dgram ? 'the unix-dgram addon is not installed' : `the addon cannot address ${this.socket}`;
    this.#command = options.command ?? 'systemd-notify';
    this.#barrier = options.barrier ?? process.env.SD_NOTIFY_BARRIER !== '0';
  }

  get enabled(): boolean {
    return this.socket !== null && !this.#missing;
  }

  /** Sends `VAR=VALUE` pairs in one datagram; resolves true when it was sent. */
  send(fields: Record<string, string | number>): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const lines = Object.entries(fields).map(([k, v]) => `${k}=${clean(String(v))}`);
    const next = this.#queue.then(() => (this.#dgram ? this.#datagram(this.#dgram, lines) : this.#spawn(lines)));
    this.#queue = next;
    return next;
  }

  #sent(): true {
    this.sent++;
    if (this.#failing) log.info({ socket: this.socket }, 'systemd notifications work again');
    this.#failing = null;
    return true;
  }

  #failed(reason: string, fields: Record<string, unknown>): false {
    if (reason !== this.#failing) log.warn({ socket: this.socket, ...fields }, `cannot notify systemd: ${reason}`);
    else log.debug({ socket: this.socket, ...fields }, `cannot notify systemd: ${reason}`);
    this.#failing = reason;
    return false;
  }

  /**
   * One datagram from a socket opened for it. A full receive queue (EAGAIN: the manager is busy;
   * Linux queues 10 datagrams per socket by default) is retried for about 0.6 s.
   */
  async #datagram(dgram: UnixDgram, lines: string[]): Promise<boolean> {
    const buf = Buffer.from(lines.join('\n'), 'utf8');
    const message = lines.join(' ').slice(0, 80);
    let sock: UnixDgramSocket;
    try {
      sock = dgram.createSocket('unix_dgram');
    } catch (err) {
      return this.#failed(`no datagram socket (${errnoName(err as Error)})`, { message });
    }
    sock.on('error', () => undefined); // errors reach the send callback
    try {
      for (let attempt = 0; ; attempt++) {
        const err = await new Promise<string | null>((resolve) =>
          sock.send(buf, 0, buf.length, this.socket!, (e) => resolve(e ? errnoName(e) : null)),
        );
        if (err === null) return this.#sent();
        if (!BUSY.has(err) || attempt >= 6) return this.#failed(`sendto ${this.socket} failed (${err})`, { message });
        await new Promise((r) => setTimeout(r, 10 << attempt));
      }
    } finally {
      try {
        sock.close();
      } catch {
        // the descriptor is gone either way
      }
    }
  }

  #spawn(lines: string[]): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const argv = this.#barrier ? lines : ['--no-block', ...lines];
    return new Promise<boolean>((resolve) => {
      let stderr = '';
      const child = spawn(this.#command, argv, {
        env: { ...process.env, NOTIFY_SOCKET: this.socket! },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let errored = false;
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (err: NodeJS.ErrnoException) => {
        errored = true;
        if (err.code === 'ENOENT') {
          this.#missing = true;
          log.warn(
            { command: this.#command },
            `${this.#command} not found and ${this.#why}: systemd notifications (READY, WATCHDOG) are off; reinstall edge-agent where a C++ compiler is present (npm then builds the addon), install systemd, or run without Type=notify`,
          );
          resolve(false);
        } else resolve(this.#failed(`cannot run ${this.#command} (${err.message})`, {}));
      });
      child.on('close', (code) => {
        if (errored) return;
        if (code === 0) resolve(this.#sent());
        else
          resolve(this.#failed(`${this.#command} exited with ${code}`, { stderr: stderr.trim(), message: lines.join(' ').slice(0, 80) }));
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
    const ready =
      this.#options.readyStatus?.() ??
      (ctx?.config ? `running: terminal ${ctx.config.terminal.id}, upstream ${ctx.config.upstream.join('+')}` : 'running');
    if (this.notify.via === 'systemd-notify') {
      // The shipped unit says NotifyAccess=main, under which systemd drops what a child sends:
      // the agent would never be READY and would be restarted at TimeoutStartSec.
      log.warn(
        { socket: this.notify.socket },
        'systemd notifications go through systemd-notify (a child process): the unit needs NotifyAccess=all, which "edge-agent install-service" and the .deb write (edge-agent.service.d/notify-access.conf) where the unix-dgram addon does not load; run install-service again after changing Node, or reinstall edge-agent where a C++ compiler is present so npm builds the addon',
      );
    }
    await this.notify.ready(ready);
    log.info({ watchdogMs: interval, via: this.notify.via }, 'told systemd the agent is ready');
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
