/**
 * The fleet as the page shows it: a short table row per terminal (times in ms), the console's
 * own state, the snapshot a page starts from (`/api/fleet`, the first server-sent event), and a
 * terminal's detail (`/api/terminal`).
 */
import { oldestPendingAgeNow } from '../ops/fleet-row.js';
import type { ConsoleContext } from './console-context.js';
import { stateSince, type TerminalRecord } from './console-fleet.js';
import { fail } from './web.js';

/** One terminal as the fleet table shows it: short keys, times in ms. */
export interface TableRow {
  key: string;
  site: string;
  terminal: string;
  /** online | degraded | offline | lost (src/ops/terminal-state.ts), as /metrics, fleet and Home Assistant say. */
  state: string | null;
  /** Why it is degraded: its reasons' sentences. */
  reasons: string[];
  since: number | null;
  sinceExact: boolean;
  lastSeen: number | null;
  metricsAt: number | null;
  pending: number | null;
  oldestSec: number | null;
  dead: number | null;
  lastDelivery: number | null;
  scanners: number | null;
  scannersReady: number | null;
  idP95: number | null;
  capP95: number | null;
  /** The terminal trusts its clock (synchronized or assumed). */
  clock: boolean | null;
  /** synchronized | assumed | unsynchronized. */
  clockState: string | null;
  temp: number | null;
  disk: number | null;
  version: string | null;
  alerts: number;
  severity: 'critical' | 'warning' | null;
}

const ms = (iso: string | null) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
};

export class FleetView {
  readonly #ctx: ConsoleContext;

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
  }

  row(r: TerminalRecord): TableRow {
    const since = stateSince(r);
    const alerts = this.#ctx.book.forTerminal(r.site, r.terminal);
    const row = r.row;
    return {
      key: r.key,
      site: r.site,
      terminal: r.terminal,
      state: row.state,
      reasons: row.reasons.map((x) => x.message),
      since: since.at,
      sinceExact: since.exact,
      lastSeen: ms(row.lastSeen),
      metricsAt: ms(row.metricsAt),
      pending: row.queuePending,
      oldestSec: row.oldestPendingAgeSec,
      dead: row.dead,
      lastDelivery: ms(row.lastDelivery),
      scanners: row.scannersReady === null ? null : row.scanners.length,
      scannersReady: row.scannersReady,
      idP95: row.identificationP95Ms,
      capP95: row.captureP95Ms,
      clock: row.clockSynchronized,
      clockState: row.clock,
      temp: row.cpuTempC,
      disk: row.freeDiskMb,
      version: row.version,
      alerts: alerts.length,
      severity: alerts.length === 0 ? null : alerts.some((a) => a.severity === 'critical') ? 'critical' : 'warning',
    };
  }

  /** The rows of these keys, leaving out those gone. */
  rows(keys: Iterable<string>): TableRow[] {
    return [...keys].flatMap((k) => {
      const r = this.#ctx.fleet.get(k);
      return r ? [this.row(r)] : [];
    });
  }

  /** The console's own state as the page shows it. */
  state() {
    const { health, options, commands, settings } = this.#ctx;
    return {
      mqttConnected: health.mqttConnected,
      loginRequired: options.login !== null,
      commands,
      prefix: options.prefix,
      rules: settings.alerts,
      /** Every time on the page is shown in this zone, named beside them. */
      timeZone: settings.timeZone ?? 'UTC',
      now: Date.now(),
    };
  }

  snapshot() {
    return { console: this.state(), terminals: this.#ctx.fleet.records().map((r) => this.row(r)), alerts: this.#ctx.book.all() };
  }

  /** A terminal's page; CONSOLE_NOT_FOUND (404) for a key that never reported. */
  terminal(key: string) {
    const { fleet, book, options, commands } = this.#ctx;
    const r = fleet.get(key);
    if (!r) throw fail(404, 'CONSOLE_NOT_FOUND', `no terminal ${key} has reported under ${options.prefix}`);
    const now = Date.now();
    const since = stateSince(r);
    return {
      row: r.row,
      table: this.row(r),
      oldestPendingAgeNowSec: oldestPendingAgeNow(r.row, now),
      since: since.at,
      sinceExact: since.exact,
      transitions: r.transitions,
      errors: [...r.errors].reverse(),
      alerts: book.forTerminal(r.site, r.terminal),
      history: r.history?.view(now) ?? null,
      info: r.info,
      metrics: r.metrics,
      commands,
      now,
    };
  }
}
