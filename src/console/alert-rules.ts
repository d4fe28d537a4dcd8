/**
 * The console's alert rules (config `console.alerts`), judged per terminal from its fleet row
 * and how long it has been in its state. An alert has a stable code, a severity, a sentence with
 * the figures and what to do. `AlertBook` remembers since when each alert holds, so the page and
 * the retained `<prefix>/<site>/alerts` documents say it, and tells which sites' sets changed.
 */
import type { AgentConfig } from '../config/config.js';
import { oldestPendingAgeNow, type FleetRow } from '../ops/fleet-row.js';
import { describeState, isLive } from '../ops/terminal-state.js';

export type AlertRules = AgentConfig['console']['alerts'];

export type ConsoleAlertCode =
  | 'TERMINAL_LOST'
  | 'TERMINAL_DEGRADED'
  | 'TERMINAL_SILENT'
  | 'QUEUE_OLDEST_PENDING'
  | 'DEAD_LETTERS'
  | 'CLOCK_UNSYNCHRONIZED'
  | 'DISK_LOW'
  | 'TEMPERATURE_HIGH';

export interface RaisedAlert {
  /** A console rule's code, or the terminal's own alert code (CLOCK_HELD_LONG, ...). */
  code: string;
  severity: 'critical' | 'warning';
  site: string;
  terminal: string;
  message: string;
  hint: string;
}

export interface ActiveAlert extends RaisedAlert {
  /** When the console first saw it hold (ISO). */
  since: string;
}

/** What the judgement needs beside the row: when the terminal entered its state (ms), if known. */
export interface TerminalTimes {
  stateSince: number | null;
}

function minutes(sec: number): string {
  if (sec < 120) return `${Math.round(sec)} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  return `${Math.round(sec / 360) / 10} h`;
}

/** The alerts that hold for one terminal now. */
export function judgeTerminal(row: FleetRow, times: TerminalTimes, rules: AlertRules, now: number): RaisedAlert[] {
  const out: RaisedAlert[] = [];
  const at = (code: string, severity: RaisedAlert['severity'], message: string, hint: string) =>
    out.push({ code, severity, site: row.site, terminal: row.terminal, message, hint });
  const live = isLive(row.state);
  const inStateSec = times.stateSince === null ? null : Math.max(0, (now - times.stateSince) / 1000);
  if (rules.lostMinutes !== null && row.state === 'lost' && (inStateSec === null || inStateSec >= rules.lostMinutes * 60)) {
    at(
      'TERMINAL_LOST',
      'critical',
      `lost${rules.lostMinutes > 0 ? ` for more than ${minutes(rules.lostMinutes * 60)}` : ''}: its connection to the broker died without a clean stop`,
      'check power and network at the terminal; the agent reconnects by itself, punches wait in its outbox meanwhile',
    );
  }
  if (rules.degraded && row.state === 'degraded') {
    at(
      'TERMINAL_DEGRADED',
      'warning',
      describeState(row),
      'it runs but not fully: fix what each reason names (edge-agent doctor on the terminal; a scanner: its cable; the clock: NTP; the outbox: the upstream)',
    );
  }
  const seenSec = row.lastSeen ? (now - Date.parse(row.lastSeen)) / 1000 : null;
  if (rules.silentMinutes !== null && live && seenSec !== null && seenSec > rules.silentMinutes * 60) {
    at(
      'TERMINAL_SILENT',
      'warning',
      `says ${row.state} but has published nothing for more than ${minutes(rules.silentMinutes * 60)}`,
      'a half-open connection or a stuck agent: look at "journalctl -u edge-agent" on the terminal, or send it a ping',
    );
  }
  const oldest = oldestPendingAgeNow(row, now);
  if (rules.oldestPendingMinutes !== null && oldest !== null && (row.queuePending ?? 0) > 0 && oldest > rules.oldestPendingMinutes * 60) {
    at(
      'QUEUE_OLDEST_PENDING',
      'warning',
      `${row.queuePending} punch(es) pending, the oldest for more than ${minutes(rules.oldestPendingMinutes * 60)}`,
      'the upstream does not take them: check its URL, credentials and network (edge-agent doctor on the terminal); held punches wait for a trusted clock',
    );
  }
  if (rules.deadLetters && (row.dead ?? 0) > 0) {
    at(
      'DEAD_LETTERS',
      'warning',
      `${row.dead} dead letter(s): punches the upstream refused for good`,
      "open the terminal's page to see them, fix the cause (an unknown employee code, ...) and retry them",
    );
  }
  if (rules.clockUnsynchronized && row.clock === 'unsynchronized') {
    at(
      'CLOCK_UNSYNCHRONIZED',
      'warning',
      'its clock is not synchronized: new punches are held until it is',
      'check time synchronization on the terminal (timedatectl timesync-status, UDP port 123 to the NTP server)',
    );
  }
  if (rules.minFreeDiskMb !== null && row.freeDiskMb !== null && row.freeDiskMb < rules.minFreeDiskMb) {
    at(
      'DISK_LOW',
      row.freeDiskMb < rules.minFreeDiskMb / 4 ? 'critical' : 'warning',
      `${row.freeDiskMb} MB free in the data folder (limit ${rules.minFreeDiskMb} MB)`,
      'free space on the terminal (old logs: journalctl --vacuum-size=100M) or purge delivered punches (edge-agent queue purge)',
    );
  }
  if (rules.maxCpuTempC !== null && row.cpuTempC !== null && row.cpuTempC > rules.maxCpuTempC) {
    at(
      'TEMPERATURE_HIGH',
      'warning',
      `CPU above ${rules.maxCpuTempC} °C (${Math.round(row.cpuTempC)} °C)`,
      "check the enclosure's ventilation and the sun on it; a Raspberry Pi slows down above 80 °C",
    );
  }
  if (rules.terminalAlerts) {
    for (const a of row.terminalAlerts)
      at(a.code, 'warning', a.message, a.hint ?? "see the terminal's own hint: edge-agent queue status on the terminal");
  }
  return out;
}

/** The alerts that hold now, each with its start, by terminal. */
export class AlertBook {
  /** `site/terminal` → code → alert. */
  readonly #active = new Map<string, Map<string, ActiveAlert>>();

  /**
   * Replaces one terminal's alerts with `raised` (keeping the start of those that go on) and
   * returns true when its set of codes changed or a message did.
   */
  set(site: string, terminal: string, raised: RaisedAlert[], now: number): boolean {
    const key = `${site}/${terminal}`;
    const old = this.#active.get(key);
    if (raised.length === 0) {
      this.#active.delete(key);
      return old !== undefined && old.size > 0;
    }
    let changed = !old || old.size !== raised.length;
    const next = new Map<string, ActiveAlert>();
    for (const a of raised) {
      const before = old?.get(a.code);
      if (!before || before.message !== a.message || before.severity !== a.severity) changed = true;
      next.set(a.code, { ...a, since: before?.since ?? new Date(now).toISOString() });
    }
    this.#active.set(key, next);
    return changed;
  }

  /** Every active alert, critical first, then by site, terminal and code. */
  all(): ActiveAlert[] {
    return sorted([...this.#active.values()].flatMap((m) => [...m.values()]));
  }

  forSite(site: string): ActiveAlert[] {
    return sorted([...this.#active.entries()].filter(([k]) => k.startsWith(`${site}/`)).flatMap(([, m]) => [...m.values()]));
  }

  forTerminal(site: string, terminal: string): ActiveAlert[] {
    return sorted([...(this.#active.get(`${site}/${terminal}`)?.values() ?? [])]);
  }

  count(site: string, terminal: string): number {
    return this.#active.get(`${site}/${terminal}`)?.size ?? 0;
  }
}

function sorted(alerts: ActiveAlert[]): ActiveAlert[] {
  return alerts.sort(
    (a, b) =>
      (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1) ||
      a.site.localeCompare(b.site) ||
      a.terminal.localeCompare(b.terminal) ||
      a.code.localeCompare(b.code),
  );
}
