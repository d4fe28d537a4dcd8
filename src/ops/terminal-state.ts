/**
 * The one state model of a terminal, read by every view: the agent's own metrics and state topic,
 * `edge-agent fleet` (and `--check`), the console's table, pages and alerts, its `/metrics` and
 * Home Assistant (whose State sensor reads the state topic the agent publishes from here).
 *
 * States: `online` (runs fully), `degraded` (runs, but not fully: one reason or more), `offline`
 * (stopped cleanly), `lost` (its connection died: the broker published its last will).
 *
 * Reasons for `degraded`, each a stable code and a sentence:
 * - SCANNER_NOT_READY: a scanner is not ready (disconnected, connecting, ...);
 * - CLOCK_UNTRUSTED: the clock is not trusted (punches are stamped untrusted and held);
 * - OUTBOX_FULL: the outbox reached its cap (new punches are refused);
 * - UPSTREAM_FAILING: delivery to an upstream fails;
 * - PUNCH_NOT_RECORDED: a punch could not be recorded;
 * - TERMINAL_ALERT: an alert waits for a person (CLOCK_HELD_LONG, ...).
 *
 * The clock reads `synchronized` only when a time service confirmed it; `assumed` when the clock
 * is taken as right because nothing can tell (doctor says the same); `unsynchronized` otherwise.
 *
 * "Since" is the last change of state, never the last publish: the agent keeps it
 * (`StateSince`) and publishes it in its metrics (`stateSince`); a view that watched the change
 * itself uses that; a view that found the state retained estimates it (marked not exact).
 */

export const TERMINAL_STATES = ['online', 'degraded', 'offline', 'lost'] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];

export type ClockReading = 'synchronized' | 'assumed' | 'unsynchronized';

export const REASON_CODES = [
  'SCANNER_NOT_READY',
  'CLOCK_UNTRUSTED',
  'OUTBOX_FULL',
  'UPSTREAM_FAILING',
  'PUNCH_NOT_RECORDED',
  'TERMINAL_ALERT',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface Reason {
  /** A ReasonCode, or `DEGRADED` for a sentence of an older agent that sent no code. */
  code: string;
  message: string;
}

/** True for the states of a terminal that runs (it publishes; Home Assistant shows it available). */
export function isLive(state: string | null): boolean {
  return state === 'online' || state === 'degraded';
}

/** The clock as a person reads it, from the agent's trust and the source that decided. */
export function clockReading(trusted: boolean | null | undefined, source: string | null | undefined): ClockReading | null {
  if (trusted === null || trusted === undefined) return null;
  if (!trusted) return 'unsynchronized';
  return source === 'assumed' ? 'assumed' : 'synchronized';
}

/** What the agent knows of itself, to judge its state. */
export interface HealthInputs {
  scanners: ReadonlyArray<{ key: string; status: string }>;
  /** Null when the agent has no clock authority (nothing to judge). */
  clock: { trusted: boolean; source: string | null } | null;
  /** Null when the outbox is not open. */
  outbox: { capFullPercent: number; maxPending?: number } | null;
  /** Errors that still hold, by source (`upload:<sink>`, `capture:<scanner>`, ...). */
  problems: ReadonlyArray<{ source: string; message: string }>;
  /** Alerts that wait for a person. */
  alerts: ReadonlyArray<{ code: string }>;
}

export interface Health {
  state: 'online' | 'degraded';
  reasons: Reason[];
}

/** The agent's judgement of itself: online, or degraded with every reason. */
export function deriveHealth(i: HealthInputs): Health {
  const reasons: Reason[] = [];
  for (const s of i.scanners)
    if (s.status !== 'ready') reasons.push({ code: 'SCANNER_NOT_READY', message: `scanner ${s.key} ${s.status}` });
  if (i.clock && !i.clock.trusted)
    reasons.push({
      code: 'CLOCK_UNTRUSTED',
      message: `clock not trusted${i.clock.source ? ` (${i.clock.source})` : ''}: punches are stamped untrusted and held until it is`,
    });
  if (i.outbox && i.outbox.capFullPercent >= 100)
    reasons.push({
      code: 'OUTBOX_FULL',
      message: `outbox full${i.outbox.maxPending ? ` (${i.outbox.maxPending} pending and dead)` : ''}: new punches are refused`,
    });
  // A module placement (host matching covers it), a site record or a dead letter is a last error only.
  for (const p of i.problems) {
    if (p.source.startsWith('upload:')) reasons.push({ code: 'UPSTREAM_FAILING', message: p.message });
    else if (p.source.startsWith('capture:')) reasons.push({ code: 'PUNCH_NOT_RECORDED', message: p.message });
  }
  for (const a of i.alerts) reasons.push({ code: 'TERMINAL_ALERT', message: `alert ${a.code}` });
  return { state: reasons.length ? 'degraded' : 'online', reasons };
}

/** Since when a value holds: changes only when the value does (or on `reset`, a new connection). */
export class StateSince<T> {
  #value: T | undefined;
  #since = 0;

  /** Records the value now; returns since when it holds (ms). */
  update(value: T, now = Date.now()): number {
    if (this.#value !== value || this.#since === 0) {
      this.#value = value;
      this.#since = now;
    }
    return this.#since;
  }

  /** Forgets the value: the next update starts a new period (a reconnection: others saw it lost). */
  reset(): void {
    this.#value = undefined;
    this.#since = 0;
  }
}

/** What a view has of a terminal: the state topic's word, the metrics and info it published. */
export interface StateInputs {
  /** The retained state topic (online, degraded, offline, lost), null before it was seen. */
  word: string | null;
  metrics: {
    health?: string | null;
    state?: string | null;
    stateSince?: string | null;
    reasons?: ReadonlyArray<{ code: string; message: string }> | null;
    degraded?: ReadonlyArray<string> | null;
    clock?: { clockTrusted?: boolean | null; clockSource?: string | null } | null;
  } | null;
  info: { at?: string | null; clock?: { synchronized?: boolean | null; clockSource?: string | null } | null } | null;
  /** Newest `at` of info and metrics (ISO). */
  lastSeen: string | null;
  /** When this view saw the state change itself (ms); null when it found it retained. */
  changedAt?: number | null;
}

export interface StateView {
  state: string | null;
  reasons: Reason[];
  /** Since when it is in that state (ms), null when nothing tells. */
  since: number | null;
  /** False when `since` is an estimate (the view started after the change and the agent did not say). */
  sinceExact: boolean;
  clock: ClockReading | null;
}

function ms(iso: string | null | undefined): number | null {
  const t = iso ? Date.parse(iso) : Number.NaN;
  return Number.isFinite(t) ? t : null;
}

/**
 * A terminal's state as every view shows it. While it runs (`online`/`degraded` on the state
 * topic) its metrics decide (an agent publishes them before the word, and an older agent only
 * said `online` there); offline and lost are the state topic's.
 */
export function terminalState(i: StateInputs): StateView {
  const m = i.metrics;
  const clock = clockReading(
    typeof m?.clock?.clockTrusted === 'boolean'
      ? m.clock.clockTrusted
      : typeof i.info?.clock?.synchronized === 'boolean'
        ? i.info.clock.synchronized
        : null,
    typeof m?.clock?.clockTrusted === 'boolean' ? m.clock.clockSource : i.info?.clock?.clockSource,
  );
  let state = i.word;
  let reasons: Reason[] = [];
  if (isLive(i.word)) {
    const health =
      m?.health === 'degraded' || m?.state === 'degraded' ? 'degraded' : m?.health === 'ok' || m?.state === 'online' ? 'online' : null;
    state = health ?? i.word;
    if (state === 'degraded') {
      reasons = m?.reasons?.length
        ? m.reasons.map((r) => ({ code: r.code, message: r.message }))
        : (m?.degraded ?? []).map((message) => ({ code: 'DEGRADED', message }));
      if (reasons.length === 0) reasons = [{ code: 'DEGRADED', message: 'degraded (the terminal gave no reason)' }];
    }
  }
  const changedAt = i.changedAt ?? null;
  let since: number | null;
  let exact: boolean;
  const agentSince = isLive(state) && m?.state === state ? ms(m.stateSince) : null;
  if (agentSince !== null) [since, exact] = [agentSince, true];
  else if (changedAt !== null) [since, exact] = [changedAt, true];
  // Found retained: online since the info it published on connecting, lost or offline since last seen.
  else [since, exact] = [isLive(state) ? ms(i.info?.at) : ms(i.lastSeen), false];
  return { state, reasons, since, sinceExact: exact, clock };
}

/** One line for people: `degraded: scanner r30x:/dev/fp0 disconnected; clock not trusted ...`. */
export function describeState(v: Pick<StateView, 'state' | 'reasons'>): string {
  if (v.state === null) return 'unknown';
  return v.reasons.length ? `${v.state}: ${v.reasons.map((r) => r.message).join('; ')}` : v.state;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const obj = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/**
 * What the model reads of a metrics document as published, picked by type without a schema (a
 * fleet view reads 100,000 of them a minute); what is of the wrong type is left out.
 */
export function stateOfMetrics(doc: Record<string, unknown>): NonNullable<StateInputs['metrics']> {
  const clock = obj(doc.clock);
  return {
    health: str(doc.health),
    state: str(doc.state),
    stateSince: str(doc.stateSince),
    reasons: Array.isArray(doc.reasons)
      ? doc.reasons.flatMap((r) => {
          const o = obj(r);
          return o && typeof o.code === 'string' && typeof o.message === 'string' ? [{ code: o.code, message: o.message }] : [];
        })
      : null,
    degraded: Array.isArray(doc.degraded) ? doc.degraded.filter((r): r is string => typeof r === 'string') : null,
    clock: clock && { clockTrusted: bool(clock.clockTrusted), clockSource: str(clock.clockSource) },
  };
}

/** What the model reads of an info document as published (see stateOfMetrics). */
export function stateOfInfo(doc: Record<string, unknown>): NonNullable<StateInputs['info']> {
  const clock = obj(doc.clock);
  return { at: str(doc.at), clock: clock && { synchronized: bool(clock.synchronized), clockSource: str(clock.clockSource) } };
}
