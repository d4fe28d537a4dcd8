/**
 * 1:N identification for the daemon: in-memory indexes built once from the template cache and
 * kept up to date from its change events (no rebuild when a person is enrolled or deleted).
 *
 * Start-up at full size (10,000 fingers, 100,000 irises): with `snapshot` the indexes are loaded
 * from an encrypted snapshot of themselves (src/store/index-snapshot.ts) when it fits the cache
 * (same database instance, its changes not pruned past the snapshot), then catch up with the
 * cache's changes since (its change log); a sample of templates is prepared again from the cache
 * and compared, so a snapshot of another layout never serves. Without a fitting snapshot every
 * template is decrypted and prepared (seconds to tens of seconds), and a snapshot is written.
 * `saveSnapshot()` writes a new one (the daemon does when a thousand changes piled up).
 *
 * `identify({modality, template})` answers `{employeeCode, modality, score, decision}` with the
 * matcher's own score: for irises the normalized Hamming distance (lower is better, accepted at
 * or below the distance the gallery's size allows for `biometrics.irisFpir`, never above
 * `biometrics.irisThreshold`: iris-decision.ts), for fingers the calibrated score ≈ −10·log10 FMR (higher
 * is better; the best person's). Fingers are decided by person (identify-person.ts: at or above
 * `biometrics.fingerThreshold`, and sure enough for the gallery's size and the runner-up), irises
 * by the best template's score. A reject carries no employee.
 * Latency percentiles per modality feed the metrics.
 */
import { AgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { IrisCode } from '../biometrics/iris/iris-code.js';
import type { FingerTemplate } from '../biometrics/finger/template.js';
import type { IrisIndexOptions } from '../biometrics/iris/iris-index.js';
import { IrisMatcher } from '../biometrics/matchers/iris-matcher.js';
import type { ModalityMatcher } from '../biometrics/matchers/modality-matcher.js';
import type { Identification } from '../core/identification.js';
import { TEMPLATE_MODALITIES, type TemplateModality } from '../core/modality.js';
import type { ChangeState, StoredTemplate, TemplateCache } from '../store/template-cache.js';
import { readIndexSnapshot, writeIndexSnapshot } from '../store/index-snapshot.js';
import { count, idsFromBytes, idsToBytes, positions, type SnapshotLoad } from '../biometrics/snapshot-part.js';
import type { AgentConfig } from '../config/config.js';
import { LatencyWindow } from '../core/latency.js';

const log = logger('agent:identifier');

export interface IdentifyRequest {
  modality: TemplateModality;
  /** Template bytes in the modality's standard format, or an already decoded template; for a badge, the card read (credentials.ts). */
  template: Uint8Array | IrisCode | FingerTemplate | { credential: string };
}

export interface IdentifierMetrics {
  modality: TemplateModality;
  templates: number;
  identifications: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface IdentifierOptions {
  biometrics: Pick<AgentConfig['biometrics'], 'fingerThreshold' | 'irisThreshold' | 'irisShiftRange'> &
    Partial<Pick<AgentConfig['biometrics'], 'irisFpir'>>;
  iris?: Omit<IrisIndexOptions, 'shiftRange'>;
  /** More matchers, or replacements by modality (built in: iris; the agent passes the finger
   * and embedding matchers of src/biometrics/matchers/ and the badge matcher `BadgeMatcher` of
   * credentials.ts). */
  matchers?: ModalityMatcher[];
  /** Load the indexes from (and save them to) this encrypted snapshot, under the template key. */
  snapshot?: { path: string; templateKey: Buffer };
}

/** How the indexes came to be at start, for the log and the benchmarks. */
export interface BuildReport {
  source: 'snapshot' | 'cache';
  /** Why the snapshot was not used (source 'cache'). */
  reason: string | null;
  /** Changes of the cache applied on top of the snapshot. */
  caughtUp: number;
  ms: number;
}

/** Templates prepared again from the cache and compared with a loaded snapshot, per matcher. */
const SNAPSHOT_SAMPLE = 16;
/** Changes after which the daemon writes a new snapshot. */
export const SNAPSHOT_AFTER_CHANGES = 1000;
const MODALITY_BITS = 2;

export class Identifier {
  readonly #cache: TemplateCache;
  readonly #matchers = new Map<TemplateModality, ModalityMatcher>();
  /**
   * Template id → owner, packed (employee number << 2 | modality): no object per template, and
   * every employee code once (`#employees`), whatever the number of templates.
   */
  #owner = new Map<string, number>();
  #employees: string[] = [];
  #employeeNumber = new Map<string, number>();
  readonly #latency = new Map<TemplateModality, LatencyWindow>();
  readonly #counts = new Map<TemplateModality, number>();
  readonly #snapshot: IdentifierOptions['snapshot'] | null;
  /** The cache's change number every index reflects (changes after it may be in too). */
  #generation = 0;
  /** Changes applied since the snapshot was loaded or written (null: no snapshot holds these indexes). */
  #unsnapshotted: number | null = null;
  #report: BuildReport = { source: 'cache', reason: null, caughtUp: 0, ms: 0 };
  #skipped = 0;
  readonly #onAdded = (t: StoredTemplate) => this.#add(t);
  readonly #onRemoved = (r: { id: string }) => this.#remove(r.id);

  private constructor(cache: TemplateCache, matchers: ModalityMatcher[], snapshot: IdentifierOptions['snapshot'] | null) {
    this.#cache = cache;
    this.#snapshot = snapshot;
    for (const m of matchers) {
      this.#matchers.set(m.modality, m);
      this.#latency.set(m.modality, new LatencyWindow());
      this.#counts.set(m.modality, 0);
    }
  }

  /** Builds every index (from the snapshot when one fits, else from the cache), then follows the cache's changes. */
  static async build(cache: TemplateCache, options: IdentifierOptions): Promise<Identifier> {
    const t0 = performance.now();
    const matchers = new Map<TemplateModality, ModalityMatcher>();
    matchers.set(
      'iris',
      new IrisMatcher(options.biometrics.irisThreshold, {
        ...options.iris,
        shiftRange: options.biometrics.irisShiftRange,
        ...(options.biometrics.irisFpir !== undefined ? { fpir: options.biometrics.irisFpir } : {}),
      }),
    );
    for (const m of options.matchers ?? []) matchers.set(m.modality, m);
    const id = new Identifier(cache, [...matchers.values()], options.snapshot ?? null);
    // Subscribe first: a change during the build is applied on top (add replaces, remove is idempotent).
    cache.on('added', id.#onAdded);
    cache.on('removed', id.#onRemoved);
    const state = await cache.changeState();
    const fromSnapshot = options.snapshot ? await id.#loadSnapshot(state) : 'no snapshot configured';
    if (fromSnapshot === true) {
      // Matchers a snapshot does not hold (the embedding slot, badges) come from the cache.
      for (const m of matchers.values()) if (!m.snapshot) await id.#buildFromCache(m);
    } else {
      id.#generation = state.generation;
      const counts = await cache.countsByModality();
      for (const m of matchers.values()) await id.#buildFromCache(m, counts[m.modality]);
    }
    id.#report = {
      ...id.#report,
      source: fromSnapshot === true ? 'snapshot' : 'cache',
      reason: fromSnapshot === true ? null : fromSnapshot,
      ms: Math.round(performance.now() - t0),
    };
    log.info(
      { counts: Object.fromEntries([...matchers.values()].map((m) => [m.modality, m.size])), skipped: id.#skipped, ...id.#report },
      'identification indexes built',
    );
    return id;
  }

  async #buildFromCache(m: ModalityMatcher, expected?: number): Promise<void> {
    if (expected !== undefined && m instanceof IrisMatcher) m.index.reserve(expected);
    for await (const t of this.#cache.listTemplates({ modality: m.modality, onCorrupt: (err) => this.#corrupt(err) })) this.#add(t);
  }

  /** True when the snapshot was loaded (and caught up), else why not (the indexes are empty again). */
  async #loadSnapshot(state: ChangeState): Promise<true | string> {
    const { path, templateKey } = this.#snapshot!;
    const capable = [...this.#matchers.values()].filter((m) => m.snapshot && m.loadSnapshot);
    if (capable.length === 0) return 'no matcher keeps a snapshot';
    const loads = new Map<ModalityMatcher, SnapshotLoad & { ids: () => readonly string[] }>();
    let employeesBytes = new Uint8Array(0);
    const numbers = new Map<ModalityMatcher, Int32Array>();
    const read = readIndexSnapshot(path, templateKey, (header) => {
      if (header.instance !== state.instance) return 'it belongs to another template database';
      if (header.generation < state.prunedThrough || header.generation > state.generation)
        return `it holds change ${header.generation}, the cache's log keeps ${state.prunedThrough}..${state.generation}`;
      const targets: ArrayBufferView[] = [];
      for (const m of capable) {
        const meta = header.matchers[m.modality] as Record<string, unknown> | undefined;
        if (!meta) return `it has no ${m.modality} index`;
        const load = m.loadSnapshot!(meta);
        if (typeof load === 'string') return load;
        loads.set(m, load);
        targets.push(...load.targets);
      }
      // The owners: the employee codes once, then per matcher the employee number of each slot.
      const employees = count((header.matchers.owners ?? {}) as Record<string, unknown>, 'employees');
      if (employees === null) return 'it has no owners';
      employeesBytes = new Uint8Array(employees);
      for (const m of capable) {
        const n = count(header.matchers[m.modality] as Record<string, unknown>, 'owners');
        if (n === null) return `it has no owners of the ${m.modality} templates`;
        numbers.set(m, new Int32Array(n));
      }
      return [...targets, employeesBytes, ...capable.map((m) => numbers.get(m)!)];
    });
    const undo = (reason: string): string => {
      for (const m of capable) m.clear?.();
      this.#owner = new Map();
      this.#employees = [];
      this.#employeeNumber = new Map();
      return reason;
    };
    if (!read.ok) return undo(`snapshot not used: ${read.reason}`);
    try {
      for (const load of loads.values()) load.commit();
      this.#employees = idsFromBytes(employeesBytes);
      this.#employeeNumber = positions(this.#employees);
      for (const [m, load] of loads) {
        const ids = load.ids();
        const owner = numbers.get(m)!;
        if (owner.length !== ids.length) throw new Error(`${m.modality}: ${owner.length} owners for ${ids.length} templates`);
        const mod = TEMPLATE_MODALITIES.indexOf(m.modality);
        for (let i = 0; i < ids.length; i++) {
          if (owner[i]! < 0 || owner[i]! >= this.#employees.length) throw new Error(`${m.modality}: an owner out of range`);
          this.#owner.set(ids[i]!, (owner[i]! << MODALITY_BITS) | mod);
        }
      }
      // A sample prepared again from the cache must be what the snapshot holds.
      for (const m of capable) {
        const ids = loads.get(m)!.ids();
        for (let k = 0; k < Math.min(SNAPSHOT_SAMPLE, ids.length); k++) {
          const tid = ids[Math.floor(((k + 0.5) * ids.length) / Math.min(SNAPSHOT_SAMPLE, ids.length))]!;
          const t = await this.#cache.getTemplate(tid).catch(() => null);
          // Gone or changed since the snapshot: the change log brings it. Otherwise it must match.
          if (t && !(m.holds?.(tid, t.data) ?? true) && !(await this.#changedSince(read.header.generation, tid)))
            throw new Error(`template ${tid} does not match the ${m.modality} index`);
        }
      }
    } catch (err) {
      return undo(`snapshot not used: ${(err as Error).message}`);
    }
    this.#generation = read.header.generation;
    const caughtUp = await this.#catchUp();
    this.#report = { ...this.#report, caughtUp };
    this.#unsnapshotted = caughtUp;
    return true;
  }

  async #changedSince(generation: number, templateId: string): Promise<boolean> {
    const { changes } = await this.#cache.changesSince(generation);
    return changes.some((c) => (c.op === 'put' ? c.template.id : c.id) === templateId);
  }

  /** Applies the cache's changes after `#generation` (idempotent); returns how many. */
  async #catchUp(): Promise<number> {
    const { through, changes } = await this.#cache.changesSince(this.#generation, (err) => this.#corrupt(err));
    for (const c of changes) {
      if (c.op === 'put') this.#add(c.template);
      else this.#remove(c.id);
    }
    this.#generation = Math.max(this.#generation, through);
    return changes.length;
  }

  /** How the indexes were built at start. */
  get buildReport(): BuildReport {
    return this.#report;
  }

  /** True when a new snapshot is worth writing: none holds these indexes, or many changes since. */
  get snapshotDue(): boolean {
    return this.#snapshot !== null && (this.#unsnapshotted === null || this.#unsnapshotted >= SNAPSHOT_AFTER_CHANGES);
  }

  /**
   * Writes the snapshot: first catches up with the cache's log (changes of other processes), then
   * serializes the indexes synchronously (nothing changes them meanwhile) and prunes the log up to
   * the change they hold. Returns the bytes and time, or null without a snapshot path.
   */
  async saveSnapshot(): Promise<{ bytes: number; ms: number; generation: number } | null> {
    if (!this.#snapshot) return null;
    await this.#catchUp();
    const t0 = performance.now();
    const generation = this.#generation;
    const state = await this.#cache.changeState();
    const capable = [...this.#matchers.values()].filter((m) => m.snapshot && m.loadSnapshot);
    const matchers: Record<string, unknown> = {};
    const sections: ArrayBufferView[] = [];
    const owners: Int32Array[] = [];
    for (const m of capable) {
      const part = m.snapshot!();
      const owner = Int32Array.from(part.ids, (tid) => (this.#owner.get(tid) ?? 0) >>> MODALITY_BITS);
      matchers[m.modality] = { ...part.meta, owners: owner.length };
      sections.push(...part.sections);
      owners.push(owner);
    }
    const employees = idsToBytes(this.#employees);
    matchers.owners = { employees: employees.length };
    const bytes = writeIndexSnapshot(this.#snapshot.path, this.#snapshot.templateKey, { instance: state.instance, generation, matchers }, [
      ...sections,
      employees,
      ...owners,
    ]);
    const ms = Math.round(performance.now() - t0);
    this.#unsnapshotted = 0;
    await this.#cache.pruneChanges(generation);
    log.info({ bytes, ms, generation }, 'identification index snapshot written');
    return { bytes, ms, generation };
  }

  #employee(code: string): number {
    let n = this.#employeeNumber.get(code);
    if (n === undefined) {
      n = this.#employees.length;
      this.#employees.push(code);
      this.#employeeNumber.set(code, n);
    }
    return n;
  }

  #ownerOf(templateId: string): { employeeCode: string; modality: TemplateModality } | null {
    const v = this.#owner.get(templateId);
    return v === undefined
      ? null
      : { employeeCode: this.#employees[v >>> MODALITY_BITS]!, modality: TEMPLATE_MODALITIES[v & ((1 << MODALITY_BITS) - 1)]! };
  }

  #add(t: StoredTemplate): void {
    const m = this.#matchers.get(t.modality);
    if (!m) return;
    if (!m.formats.includes(t.format)) {
      this.#skipped++;
      return;
    }
    try {
      m.add(t.id, t.data, t.format);
      this.#owner.set(t.id, (this.#employee(t.employeeCode) << MODALITY_BITS) | TEMPLATE_MODALITIES.indexOf(t.modality));
      if (this.#unsnapshotted !== null) this.#unsnapshotted++;
    } catch (err) {
      this.#skipped++;
      log.error(
        { id: t.id, employeeCode: t.employeeCode, err: err instanceof AgentError ? err.toJSON() : String(err) },
        'template not indexed: it does not decode',
      );
    }
  }

  #corrupt(err: AgentError): void {
    this.#skipped++;
    log.error({ err: err.toJSON() }, 'template not indexed: it does not decrypt');
  }

  #remove(id: string): void {
    const owner = this.#ownerOf(id);
    if (!owner) return;
    this.#matchers.get(owner.modality)?.remove(id);
    this.#owner.delete(id);
    if (this.#unsnapshotted !== null) this.#unsnapshotted++;
  }

  /** Templates that are stored but not indexed (formats only a module can match, undecodable). */
  get skipped(): number {
    return this.#skipped;
  }

  size(modality: TemplateModality): number {
    return this.#matchers.get(modality)?.size ?? 0;
  }

  async identify(request: IdentifyRequest): Promise<Identification> {
    const m = this.#matchers.get(request.modality);
    if (!m) {
      throw new AgentError(
        'BIOMETRICS_MODALITY_UNSUPPORTED',
        `no ${request.modality} matcher in this agent`,
        { modality: request.modality },
        { hint: 'identify with a finger or iris template' },
      );
    }
    const t0 = performance.now();
    const personOf = (id: string) => this.#ownerOf(id)?.employeeCode ?? null;
    let templateId: string | null;
    let score: number | null;
    let between: string[] | undefined;
    let needed: number | undefined;
    if (m.decide) ({ templateId, score, between } = await m.decide(request.template, personOf));
    else {
      const best = await m.best(request.template);
      score = best?.score ?? null;
      templateId = best !== null && m.accepts(best.score) ? best.id : null;
      needed = m.acceptAt;
    }
    const r = this.#answer(m, t0, templateId === null ? null : personOf(templateId), templateId, score);
    const told = needed === undefined ? r : { ...r, needed };
    return told.decision === 'reject' && between && between.length > 0 ? { ...told, between } : told;
  }

  /** One identification's answer (a reject names nobody), its time counted in the modality's latency. */
  #answer(m: ModalityMatcher, t0: number, employeeCode: string | null, templateId: string | null, score: number | null): Identification {
    const ms = performance.now() - t0;
    this.#latency.get(m.modality)!.add(ms);
    this.#counts.set(m.modality, this.#counts.get(m.modality)! + 1);
    const accepted = employeeCode !== null;
    return {
      employeeCode,
      modality: m.modality,
      score,
      decision: accepted ? 'accept' : 'reject',
      path: 'host',
      templateId: accepted ? templateId : null,
      ms,
    };
  }

  /**
   * The decision on several captures of one person (a first finger and the second one the
   * terminal asked for), fused by person among the templates of `among` only: the persons the
   * first capture could not tell apart. Each template's finger position comes from the cache, so
   * the same finger presented twice does not count twice. A matcher that fuses nothing (irises,
   * badges) is refused.
   */
  async identifyAmong(request: {
    modality: TemplateModality;
    templates: readonly Uint8Array[];
    among: readonly string[];
  }): Promise<Identification> {
    const m = this.#matchers.get(request.modality);
    if (!m?.decideAmong) {
      throw new AgentError(
        'BIOMETRICS_MODALITY_UNSUPPORTED',
        `no ${request.modality} matcher here decides on several captures`,
        { modality: request.modality },
        { hint: 'a second capture is asked for fingers only' },
      );
    }
    const t0 = performance.now();
    const owners = new Map<string, { person: string; position: string }>();
    for (const person of new Set(request.among))
      for (const t of await this.#cache.listTemplateMeta({ employeeCode: person, modality: request.modality }))
        if (this.#owner.has(t.id)) owners.set(t.id, { person, position: t.position ?? t.id });
    const { templateId, score } = await m.decideAmong(request.templates, owners, (id) => this.#ownerOf(id)?.employeeCode ?? null);
    return this.#answer(m, t0, templateId === null ? null : (owners.get(templateId)?.person ?? null), templateId, score);
  }

  metrics(): IdentifierMetrics[] {
    return [...this.#matchers.values()].map((m) => {
      const w = this.#latency.get(m.modality)!;
      return {
        modality: m.modality,
        templates: m.size,
        identifications: this.#counts.get(m.modality)!,
        p50Ms: w.percentile(50),
        p95Ms: w.percentile(95),
      };
    });
  }

  async close(): Promise<void> {
    this.#cache.off('added', this.#onAdded);
    this.#cache.off('removed', this.#onRemoved);
    for (const m of this.#matchers.values()) await m.close();
  }
}
