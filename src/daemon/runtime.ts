/**
 * What the agent's components share at run time: the template cache and the engines the
 * recognizer reads (identifier, extractor, embedder, module slots, badge credentials), the
 * scanner workers, the site sync and the ops connection, plus the figures that answer "what is
 * this terminal doing?" (info and metrics). No recognition happens here: that is the terminal's
 * (src/terminal/recognizer.ts, punch-step.ts).
 *
 * The components (components/*.ts) fill it in as they start; each reads what the ones before it
 * left, so the order in wiring.ts is the dependency order.
 */
import type { SimulatorControl } from '../../drivers/simulated.js';
import { VERSION } from '../core/version.js';
import { toAgentError } from '../core/errors.js';
import { systemMetrics } from '../ops/system-metrics.js';
import { clockAlerts } from '../ops/alerts.js';
import { deriveHealth, type Health } from '../ops/terminal-state.js';
import type { SiteTemplateSync } from '../site-sync/site-sync.js';
import type { TerminalOps } from '../ops/terminal-ops.js';
import type { ModuleSlots } from '../store/module-slots.js';
import type { TemplateCache } from '../store/template-cache.js';
import { siteRecordOf } from '../site-sync/template-store.js';
import type { Embedder, Extractor } from '../terminal/engines.js';
import type { CredentialHasher } from '../terminal/credentials.js';
import type { AgentConfig } from '../config/config.js';
import type { DaemonContext } from './component.js';
import type { Identifier } from '../terminal/identifier.js';
import { LatencyWindow } from '../core/latency.js';
import type { CaptureOutcome, ScannerWorker } from '../terminal/scanner-worker.js';
import type { Secrets } from '../config/secrets.js';

/** The time authority as info and metrics see it. */
export interface ClockView {
  isTrusted(): boolean;
  metrics(): Record<string, unknown> & { clockDetail: string };
}

/** Problems kept per kind of source (the part of its name before the first colon). */
export const MAX_PROBLEMS_PER_KIND = 32;

function problemKind(source: string): string {
  const i = source.indexOf(':');
  return i < 0 ? source : source.slice(0, i);
}

export class TerminalRuntime {
  readonly config: AgentConfig;
  readonly secrets: Secrets;
  ctx: DaemonContext | null = null;
  cache: TemplateCache | null = null;
  identifier: Identifier | null = null;
  extractor: Extractor | null = null;
  /** The embedding slot, when a model is configured (biometrics.embedding). */
  embedder: Embedder | null = null;
  /** Badge credentials' keyed hashes (with the template cache). */
  credentials: CredentialHasher | null = null;
  slots: ModuleSlots | null = null;
  readonly workers = new Map<string, ScannerWorker>();
  /** Simulators behind simulated scanners, by scanner key (the embedded default presents fingers). */
  readonly simulators = new Map<string, SimulatorControl>();
  siteSync: SiteTemplateSync | null = null;
  ops: TerminalOps | null = null;
  readonly captureLatency = { module: new LatencyWindow(), host: new LatencyWindow() };
  readonly counters = { punched: 0, duplicate: 0, unknown: 0, tryAgain: 0, refused: 0, awaiting: 0, denied: 0 };
  /**
   * What is wrong now, by source (`scanner:<key>`, `upload:<sink>`, `dead-letters`, ...): set by
   * `noteError`, removed by `resolve` when the source works again, so the last error operations see
   * is one that still holds, with the time it began.
   */
  readonly #problems = new Map<string, { at: string; message: string }>();
  lastCapture: CaptureOutcome | null = null;
  /** When the last punch was recorded by a scanner here (ISO), for the console and Home Assistant. */
  lastPunchAt: string | null = null;
  readonly startedAt = new Date();

  /** The time authority as info and metrics see it, once the daemon's context has one. */
  get clock(): ClockView | null {
    return this.ctx?.has('time') ? this.ctx.time : null;
  }

  constructor(config: AgentConfig, secrets: Secrets) {
    this.config = config;
    this.secrets = secrets;
  }

  /** Publishes a person's templates to the site; false when site sync is off or they have none. */
  async publishPerson(employeeCode: string): Promise<boolean> {
    if (!this.siteSync || !this.cache) return false;
    const record = await siteRecordOf(this.cache, employeeCode, this.config.terminal.id);
    if (!record) return false;
    await this.siteSync.publish(record);
    return true;
  }

  /** Notes an error of `source`; it stays the terminal's (last) error until `resolve(source)`. */
  noteError(err: unknown, source = 'agent'): void {
    const e = toAgentError(err);
    this.#problems.delete(source); // newest last
    this.#problems.set(source, { at: new Date().toISOString(), message: `${e.code}: ${e.message}` });
    // Some sources are named by what came off the wire (`site:<employeeCode>` for a record that
    // could not be applied): anyone on the broker can make new ones. Each kind keeps its newest
    // MAX_PROBLEMS_PER_KIND, so a flood neither grows memory without end nor pushes out the
    // problems that degrade the terminal (upload, capture, scanner).
    const kind = problemKind(source);
    let same = 0;
    for (const k of this.#problems.keys()) if (problemKind(k) === kind) same++;
    for (const k of this.#problems.keys()) {
      if (same <= MAX_PROBLEMS_PER_KIND) break;
      if (problemKind(k) === kind) {
        this.#problems.delete(k);
        same--;
      }
    }
  }

  /** `source` works again: its error is no longer reported. */
  resolve(source: string): void {
    this.#problems.delete(source);
  }

  /** The newest error that still holds, with its time; null when nothing is wrong. */
  get lastError(): { at: string; message: string; source: string } | null {
    const entries = [...this.#problems.entries()];
    const last = entries[entries.length - 1];
    return last ? { source: last[0], ...last[1] } : null;
  }

  /** Every error that still holds, oldest first. */
  problems(): Array<{ source: string; at: string; message: string }> {
    return [...this.#problems.entries()].map(([source, p]) => ({ source, ...p }));
  }

  noteCapture(outcome: CaptureOutcome): void {
    this.lastCapture = outcome;
    if (outcome.result === 'punched') {
      this.counters.punched++;
      this.lastPunchAt = new Date().toISOString();
    } else if (outcome.result === 'duplicate') this.counters.duplicate++;
    else if (outcome.result === 'unknown') this.counters.unknown++;
    else if (outcome.result === 'try-again') this.counters.tryAgain++;
    else if (outcome.result === 'awaiting') this.counters.awaiting++;
    else if (outcome.result === 'denied') this.counters.denied++;
    else this.counters.refused++;
    if ((outcome.result === 'punched' || outcome.result === 'duplicate') && outcome.path)
      this.captureLatency[outcome.path].add(outcome.latencyMs);
    const source = `capture:${outcome.scanner}`;
    if (outcome.result === 'refused' && outcome.detail)
      this.#problems.set(source, { at: new Date().toISOString(), message: outcome.detail });
    else if (outcome.result !== 'try-again') this.resolve(source);
  }

  scannerViews(): Array<Record<string, unknown>> {
    return [...this.workers.values()].map((w) => ({
      key: w.key,
      status: w.status,
      family: w.info?.family ?? null,
      model: w.info?.model ?? null,
      firmware: w.info?.firmware ?? null,
      capacity: w.info?.capacity ?? null,
      templates: w.info?.templates ?? null,
    }));
  }

  async info(): Promise<Record<string, unknown>> {
    return {
      version: VERSION,
      terminal: this.config.terminal.id,
      site: this.config.terminal.site,
      mode: this.config.terminal.mode,
      timeZone: this.config.terminal.timeZone,
      configVersion: this.config.configVersion,
      upstream: this.config.upstream,
      simulate: this.config.simulate,
      scanners: this.scannerViews(),
      templates: this.cache ? await this.cache.countsByModality() : null,
      clock: this.clock ? { synchronized: this.clock.isTrusted(), ...this.clock.metrics() } : null,
      startedAt: this.startedAt.toISOString(),
      node: process.version,
    };
  }

  /**
   * `degraded` when the terminal runs but not fully (src/ops/terminal-state.ts): a scanner is not
   * ready, the clock is not trusted, the outbox is full, an error still holds (delivery failing, a
   * punch that could not be recorded), or an alert waits for a person. Each reason has a code and
   * one short sentence.
   */
  health(alerts: ReadonlyArray<{ code: string }>, queue: { capFullPercent: number } | null = null): Health {
    const clock = this.clock;
    return deriveHealth({
      scanners: [...this.workers.values()],
      clock: clock ? { trusted: clock.isTrusted(), source: String(clock.metrics().clockSource ?? '') || null } : null,
      outbox: queue && { capFullPercent: queue.capFullPercent, maxPending: this.config.outbox.maxPending },
      problems: this.problems(),
      alerts,
    });
  }

  async metrics(): Promise<Record<string, unknown>> {
    const queue = this.ctx ? await this.ctx.outbox.status() : null;
    // Dead letters stay the last error until they are retried or purged.
    if (queue && queue.dead === 0) this.resolve('dead-letters');
    const alerts = queue
      ? clockAlerts({
          held: queue.held,
          holdAlertHours: this.config.outbox.unsyncedHoldHours,
          clockDetail: this.clock?.metrics().clockDetail ?? null,
        })
      : [];
    const health = this.health(alerts, queue);
    const lastError = this.lastError;
    const ident = this.identifier?.metrics() ?? [];
    const idP95 = ident.reduce<number | null>((m, x) => (x.p95Ms === null ? m : Math.max(m ?? 0, x.p95Ms)), null);
    return {
      queue: queue && {
        pending: queue.pending,
        dead: queue.dead,
        delivered: queue.delivered,
        oldestPendingAgeSec: queue.oldestPendingAgeSec,
        unsynced: queue.unsynced,
        capFullPercent: queue.capFullPercent,
        perSink: queue.perSink,
        held: queue.held,
      },
      lastDelivery: queue?.lastDeliveryAt ?? null,
      upload: this.ctx?.uploader.metrics() ?? null,
      health: health.state === 'degraded' ? 'degraded' : 'ok',
      degraded: health.reasons.map((r) => r.message),
      reasons: health.reasons,
      scanners: this.scannerViews().map((s) => ({
        key: s.key,
        status: s.status,
        family: s.family,
        error: this.#problems.get(`scanner:${String(s.key)}`)?.message ?? null,
      })),
      identification: { p95Ms: idP95, byModality: ident },
      capture: {
        punched: this.counters.punched,
        duplicate: this.counters.duplicate,
        unknown: this.counters.unknown,
        tryAgain: this.counters.tryAgain,
        refused: this.counters.refused,
        awaiting: this.counters.awaiting,
        denied: this.counters.denied,
        modulePathP95Ms: this.captureLatency.module.percentile(95),
        hostPathP95Ms: this.captureLatency.host.percentile(95),
        lastPunchAt: this.lastPunchAt,
      },
      siteSync: this.siteSync ? { ...this.siteSync.counters } : null,
      clock: this.clock?.metrics() ?? null,
      alerts,
      system: await systemMetrics(this.config.dataDir),
      lastError: lastError?.message ?? null,
      lastErrorAt: lastError?.at ?? null,
    };
  }
}
