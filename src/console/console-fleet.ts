/**
 * The console's model of the fleet: every terminal under the prefix, from its retained state,
 * info and metrics, with what the console adds by watching: since when it is in its state, the
 * state changes it saw, the errors it reported, and a 24-hour metric history.
 *
 * Nothing from the wire is trusted: topics must name a site and a terminal as the config allows
 * them, payloads are bounded and read through schemas (src/ops/fleet-row.ts), and the number of
 * terminals kept is bounded.
 */
import { TypedEmitter } from '../core/events.js';
import { fleetRow, parseInfo, parseMetrics, type FleetRow, type ParsedInfo, type ParsedMetrics } from '../ops/fleet-row.js';
import { parseTerminalTopic } from '../ops/topics.js';
import { MetricHistory } from './history.js';

/** Site and terminal ids as the config allows them. */
const ID = /^[A-Za-z0-9._-]{1,64}$/;
const KEEP_ERRORS = 20;
const KEEP_TRANSITIONS = 20;

export interface TerminalRecord {
  key: string;
  site: string;
  terminal: string;
  /** The state topic's word as published (the state shown is `row.state`, src/ops/terminal-state.ts). */
  state: string | null;
  /** When the console saw the state shown change (ms); null when it came retained (see stateSince()). */
  stateChangedAt: number | null;
  info: ParsedInfo | null;
  metrics: ParsedMetrics | null;
  row: FleetRow;
  history: MetricHistory | null;
  errors: Array<{ at: string; message: string }>;
  transitions: Array<{ state: string | null; at: string }>;
}

export interface ConsoleFleetEvents extends Record<string, unknown> {
  change: TerminalRecord;
  remove: string;
  /** A message that was not taken (too big, not JSON, a topic that names no terminal): its reason. */
  dropped: string;
}

export interface ConsoleFleetOptions {
  prefix: string;
  historyHours: number;
  maxPayloadBytes: number;
  maxTerminals?: number;
}

/**
 * Since when the terminal is in its state (ms) and whether that is exact (src/ops/terminal-state.ts):
 * the terminal's own `stateSince`, else the change the console saw, else an estimate for a state
 * found retained (online since the info it published on connecting, lost or offline since it was last seen).
 */
export function stateSince(r: TerminalRecord): { at: number | null; exact: boolean } {
  const at = r.row.stateSince ? Date.parse(r.row.stateSince) : Number.NaN;
  return { at: Number.isFinite(at) ? at : null, exact: r.row.stateSinceExact };
}

export class ConsoleFleet extends TypedEmitter<ConsoleFleetEvents> {
  readonly #o: Required<ConsoleFleetOptions>;
  readonly #terminals = new Map<string, TerminalRecord>();

  constructor(options: ConsoleFleetOptions) {
    super();
    this.#o = { maxTerminals: 10_000, ...options };
  }

  get size(): number {
    return this.#terminals.size;
  }

  get(key: string): TerminalRecord | undefined {
    return this.#terminals.get(key);
  }

  /** Every terminal, by site then terminal. */
  records(): TerminalRecord[] {
    return [...this.#terminals.values()].sort((a, b) => a.site.localeCompare(b.site) || a.terminal.localeCompare(b.terminal));
  }

  #drop(reason: string): null {
    this.emit('dropped', reason);
    return null;
  }

  /**
   * Applies one message. `retained` is the MQTT retain flag: a retained state is an old one the
   * broker kept, so the console does not know when it began.
   */
  apply(topic: string, payload: Buffer, retained: boolean, now = Date.now()): TerminalRecord | null {
    const t = parseTerminalTopic(this.#o.prefix, topic);
    if (!t || !['state', 'info', 'metrics'].includes(t.leaf)) return null;
    if (!ID.test(t.site) || !ID.test(t.terminal)) return this.#drop('a site or terminal id that the config would not allow');
    if (payload.length > this.#o.maxPayloadBytes) return this.#drop(`a payload of ${payload.length} bytes (over mqtt.maxPayloadBytes)`);
    const text = payload.toString('utf8');
    // Read the payload before anything is kept: a message that is refused leaves no trace.
    let state: string | null = null;
    let doc: Record<string, unknown> | null = null;
    if (t.leaf === 'state') {
      state = text === '' ? null : text.trim().slice(0, 32);
      if (state !== null && !/^[a-z][a-z0-9-]*$/.test(state)) return this.#drop('a state that is not a word');
    } else if (text !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return this.#drop(`${t.leaf} that is not JSON`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return this.#drop(`${t.leaf} that is not a JSON object`);
      doc = parsed as Record<string, unknown>;
    }
    const key = `${t.site}/${t.terminal}`;
    let r = this.#terminals.get(key);
    if (!r) {
      if (payload.length === 0) return null;
      if (this.#terminals.size >= this.#o.maxTerminals) return this.#drop(`more than ${this.#o.maxTerminals} terminals`);
      r = {
        key,
        site: t.site,
        terminal: t.terminal,
        state: null,
        stateChangedAt: null,
        info: null,
        metrics: null,
        row: fleetRow(t.site, t.terminal, null, null, null),
        history: null,
        errors: [],
        transitions: [],
      };
      this.#terminals.set(key, r);
    }
    if (t.leaf === 'state') r.state = state;
    else if (t.leaf === 'info') r.info = doc === null ? null : parseInfo(doc);
    else r.metrics = doc === null ? null : parseMetrics(doc);
    if (r.state === null && r.info === null && r.metrics === null) {
      this.#terminals.delete(key);
      this.emit('remove', key);
      return null;
    }
    const before = r.row.state;
    r.row = fleetRow(r.site, r.terminal, r.state, r.info, r.metrics, r.stateChangedAt);
    if (r.row.state !== before) {
      // The state shown changed (the word, or the metrics' health while it runs): a retained
      // message is an old one the broker kept, so the console does not know when that began.
      r.stateChangedAt = retained ? null : now;
      r.row = fleetRow(r.site, r.terminal, r.state, r.info, r.metrics, r.stateChangedAt);
      r.transitions.push({ state: r.row.state, at: new Date(retained ? (stateSince(r).at ?? now) : now).toISOString() });
      if (r.transitions.length > KEEP_TRANSITIONS) r.transitions.shift();
    }
    if (t.leaf === 'metrics' && r.metrics) this.#noteMetrics(r, now);
    this.emit('change', r);
    return r;
  }

  #noteMetrics(r: TerminalRecord, now: number): void {
    const at = r.row.metricsAt ? Date.parse(r.row.metricsAt) : now;
    r.history ??= new MetricHistory(this.#o.historyHours);
    r.history.add(r.row, Number.isFinite(at) ? at : now, now);
    const message = r.row.lastError;
    if (message) {
      const when = r.row.lastErrorAt ?? r.row.metricsAt ?? new Date(now).toISOString();
      const last = r.errors[r.errors.length - 1];
      if (!last || last.message !== message || last.at !== when) {
        r.errors.push({ at: when, message });
        if (r.errors.length > KEEP_ERRORS) r.errors.shift();
      }
    }
  }
}
