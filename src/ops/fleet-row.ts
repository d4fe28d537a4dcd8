/**
 * One terminal's row of a fleet view, derived from what it publishes retained: `state`, `info`
 * and `metrics` (src/ops/topics.ts). Pure and schema-checked: every figure is read through a
 * bounded schema and a field of the wrong type, too long or missing is null, never an exception,
 * so one terminal publishing nonsense cannot break a view of the whole fleet.
 *
 * Shared by the views of the fleet (the console, and the fleet command where it wants the wider
 * row): they differ in how they show it, not in what a figure means.
 */
import { z } from 'zod';
import { terminalState, TERMINAL_STATES, type ClockReading, type Reason } from './terminal-state.js';

/** What the state topic may say; anything else is shown as it is (a newer agent's state). */
export const KNOWN_STATES = TERMINAL_STATES;

export interface ScannerSummary {
  key: string;
  status: string;
  family: string | null;
}

export interface FleetRow {
  /** `site/terminal` */
  key: string;
  site: string;
  terminal: string;
  /**
   * online | degraded | offline | lost (src/ops/terminal-state.ts: the state topic, and while it
   * runs its metrics' health), or null before the state topic was seen.
   */
  state: string | null;
  /** Why it is degraded (empty otherwise). */
  reasons: Reason[];
  /** Since when it is in its state (ISO) as the terminal said it, or estimated; see `stateSinceExact`. */
  stateSince: string | null;
  stateSinceExact: boolean;
  /** Newest `at` of info and metrics (ISO). */
  lastSeen: string | null;
  /** The metrics' own `at`: ages such as oldestPendingAgeSec were measured then. */
  metricsAt: string | null;
  queuePending: number | null;
  oldestPendingAgeSec: number | null;
  dead: number | null;
  delivered: number | null;
  lastDelivery: string | null;
  lastPunchAt: string | null;
  scanners: ScannerSummary[];
  scannersReady: number | null;
  identificationP95Ms: number | null;
  /** The slower of the module and host paths' capture-to-punch p95. */
  captureP95Ms: number | null;
  /** The terminal trusts its clock (`clock` synchronized or assumed); see `clock` for which. */
  clockSynchronized: boolean | null;
  /** synchronized | assumed | unsynchronized. */
  clock: ClockReading | null;
  cpuTempC: number | null;
  freeDiskMb: number | null;
  rssMb: number | null;
  version: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** The terminal's own alerts (metrics `alerts`). */
  terminalAlerts: Array<{ code: string; message: string; hint: string | null }>;
  punched: number | null;
}

const MAX_TEXT = 500;
const num = z.number().nullable().catch(null);
const count = z.number().int().min(0).nullable().catch(null);
const text = z.string().max(MAX_TEXT).nullable().catch(null);
const iso = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)))
  .nullable()
  .catch(null);
const bool = z.boolean().nullable().catch(null);
const loose = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape).nullable().catch(null);

const MetricsSchema = z.looseObject({
  at: iso,
  health: text.optional(),
  state: text.optional(),
  stateSince: iso.optional(),
  degraded: z.array(z.string().max(MAX_TEXT)).max(32).nullable().catch(null).optional(),
  reasons: z
    .array(
      z
        .looseObject({ code: z.string().max(64).catch('DEGRADED'), message: z.string().max(MAX_TEXT).catch('') })
        .catch({ code: 'DEGRADED', message: '' }),
    )
    .max(32)
    .nullable()
    .catch(null)
    .optional(),
  queue: loose({ pending: count.optional(), dead: count.optional(), delivered: count.optional(), oldestPendingAgeSec: num.optional() }),
  lastDelivery: iso.optional(),
  scanners: z
    .array(
      z
        .looseObject({ key: z.string().max(128).catch('?'), status: z.string().max(32).catch('?'), family: text.optional() })
        .catch({ key: '?', status: '?', family: null }),
    )
    .max(32)
    .nullable()
    .catch(null),
  identification: loose({ p95Ms: num.optional() }),
  capture: loose({
    punched: count.optional(),
    modulePathP95Ms: num.optional(),
    hostPathP95Ms: num.optional(),
    lastPunchAt: iso.optional(),
  }),
  clock: loose({ clockTrusted: bool.optional(), clockSource: text.optional() }),
  alerts: z
    .array(
      z
        .looseObject({ code: z.string().max(64).catch('?'), message: z.string().max(MAX_TEXT).catch(''), hint: text.optional() })
        .catch({ code: '?', message: '' }),
    )
    .max(32)
    .nullable()
    .catch(null),
  system: loose({ freeDiskMb: num.optional(), cpuTempC: num.optional(), rssMb: num.optional() }),
  lastError: text.optional(),
  lastErrorAt: iso.optional(),
});

const InfoSchema = z.looseObject({
  at: iso,
  version: z.string().max(64).nullable().catch(null).optional(),
  clock: loose({ synchronized: bool.optional(), clockSource: text.optional() }),
});

export type ParsedMetrics = z.infer<typeof MetricsSchema>;
export type ParsedInfo = z.infer<typeof InfoSchema>;

/** A metrics document as published, read leniently; null when it is not a JSON object. */
export function parseMetrics(doc: unknown): ParsedMetrics | null {
  const r = MetricsSchema.safeParse(doc);
  return r.success ? r.data : null;
}

export function parseInfo(doc: unknown): ParsedInfo | null {
  const r = InfoSchema.safeParse(doc);
  return r.success ? r.data : null;
}

function newest(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

function maxOf(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  return Math.max(a, b);
}

/**
 * The row of one terminal from its latest state word, info and metrics (each may still be
 * unknown). `changedAt`: when the view saw the state change itself (ms), null when it found it retained.
 */
export function fleetRow(
  site: string,
  terminal: string,
  word: string | null,
  info: ParsedInfo | null,
  metrics: ParsedMetrics | null,
  changedAt: number | null = null,
): FleetRow {
  const m = metrics;
  const scanners: ScannerSummary[] = (m?.scanners ?? []).map((s) => ({ key: s.key, status: s.status, family: s.family ?? null }));
  const lastSeen = newest(info?.at, m?.at);
  const view = terminalState({ word, metrics: m, info, lastSeen, changedAt });
  return {
    key: `${site}/${terminal}`,
    site,
    terminal,
    state: view.state,
    reasons: view.reasons,
    stateSince: view.since === null ? null : new Date(view.since).toISOString(),
    stateSinceExact: view.sinceExact,
    lastSeen,
    metricsAt: m?.at ?? null,
    queuePending: m?.queue?.pending ?? null,
    oldestPendingAgeSec: m?.queue?.oldestPendingAgeSec ?? null,
    dead: m?.queue?.dead ?? null,
    delivered: m?.queue?.delivered ?? null,
    lastDelivery: m?.lastDelivery ?? null,
    lastPunchAt: m?.capture?.lastPunchAt ?? null,
    scanners,
    scannersReady: m?.scanners ? scanners.filter((s) => s.status === 'ready').length : null,
    identificationP95Ms: m?.identification?.p95Ms ?? null,
    captureP95Ms: maxOf(m?.capture?.modulePathP95Ms, m?.capture?.hostPathP95Ms),
    clockSynchronized: view.clock === null ? null : view.clock !== 'unsynchronized',
    clock: view.clock,
    cpuTempC: m?.system?.cpuTempC ?? null,
    freeDiskMb: m?.system?.freeDiskMb ?? null,
    rssMb: m?.system?.rssMb ?? null,
    version: info?.version ?? null,
    lastError: m?.lastError ?? null,
    lastErrorAt: m?.lastErrorAt ?? null,
    terminalAlerts: (m?.alerts ?? []).map((a) => ({ code: a.code, message: a.message, hint: a.hint ?? null })),
    punched: m?.capture?.punched ?? null,
  };
}

/** Age in seconds of the oldest pending punch now, from the age the metrics gave at their `at`. */
export function oldestPendingAgeNow(row: Pick<FleetRow, 'oldestPendingAgeSec' | 'metricsAt'>, now: number): number | null {
  if (row.oldestPendingAgeSec === null) return null;
  const at = row.metricsAt ? Date.parse(row.metricsAt) : NaN;
  return Number.isFinite(at) ? row.oldestPendingAgeSec + Math.max(0, (now - at) / 1000) : row.oldestPendingAgeSec;
}
