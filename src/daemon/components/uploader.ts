/**
 * The uploader component: drains the outbox to the configured upstreams (the API, MQTT) through
 * the time authority's gate (nothing is claimed while it settles, never an untrusted punch).
 * Stopped after every component that punches, so in-flight batches finish (or are released
 * after the grace). A process that does not deliver (enroll, identify without a daemon) builds
 * it without sinks and never starts it: nothing about delivery is touched.
 *
 * Tested in test/unit/daemon/components/time-authority.test.ts (never an untrusted punch sent) and
 * test/unit/daemon/daemon.test.ts (in-flight batches finish after the components that punch stop).
 */
import type { Sink } from '../../upload/sink.js';
import { Uploader } from '../../upload/uploader.js';
import type { DaemonComponent, DaemonContext } from '../component.js';

export interface UploaderComponentOptions {
  /** Sinks to use instead of those built from `config.upstream` (tests, the embedded default). */
  sinks?: Sink[];
  /** False: build it (its metrics read zero) but deliver nothing. Default true. */
  deliver?: boolean;
  /** How long in-flight batches may finish on stop before they are released. Default 5 s. */
  stopGraceMs?: number;
  idlePollMs?: number;
}

export class UploaderComponent implements DaemonComponent {
  readonly name = 'uploader';
  readonly #o: UploaderComponentOptions;
  #uploader: Uploader | null = null;
  #off: (() => void) | null = null;

  constructor(options: UploaderComponentOptions = {}) {
    this.#o = options;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const { config, secrets } = ctx;
    const deliver = this.#o.deliver !== false;
    // Imported here: the sinks pull in the MQTT client, which `punch` and `queue` (openOutbox) never use.
    const sinks = this.#o.sinks ?? (deliver ? (await import('../upstreams.js')).createSinks(config, secrets) : []);
    const uploader = new Uploader({
      outbox: ctx.outbox,
      sinks,
      gate: ctx.time,
      batchSize: config.outbox.batchSize,
      backoffBaseMs: config.outbox.backoffBaseMs,
      backoffCapMs: config.outbox.backoffCapMs,
      ...(this.#o.stopGraceMs !== undefined ? { stopGraceMs: this.#o.stopGraceMs } : {}),
      ...(this.#o.idlePollMs !== undefined ? { idlePollMs: this.#o.idlePollMs } : {}),
    });
    // A judgement finished (the clock trusted again, punches corrected): claim at once.
    const wake = () => uploader.wake();
    ctx.time.on('settled', wake);
    this.#off = () => ctx.time.off('settled', wake);
    ctx.provide('uploader', uploader);
    this.#uploader = uploader;
    if (deliver) await uploader.start();
  }

  async stop(): Promise<void> {
    this.#off?.();
    this.#off = null;
    await this.#uploader?.stop();
    this.#uploader = null;
  }
}
