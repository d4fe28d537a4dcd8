/**
 * Tested in test/integration/outbox-cli.test.ts (status, dead letters, retry, import) and
 * test/integration/cli-management.test.ts (retry of an unknown id, purge --dead).
 */
import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, repeatable, withJson, withVerbs } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import { out } from '../output.js';
import type { AgentConfig } from '../../config/config.js';
import type { Outbox, ListedEvent, OutboxStatus } from '../../store/outbox.js';
import type { ClockReport } from '../../setup/clock-report.js';
import type { Alert } from '../../ops/alerts.js';

function age(sec: number | null): string {
  if (sec === null) return '-';
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  if (sec < 172_800) return `${Math.round(sec / 3600)} h`;
  return `${Math.round(sec / 86_400)} days`;
}

function signed(sec: number): string {
  return `${sec > 0 ? '+' : sec < 0 ? '-' : ''}${age(Math.abs(Math.round(sec)))}`;
}

function printStatus(s: OutboxStatus, clock: ClockReport, alerts: Alert[], write: (text: string) => void = (text) => void out(text)): void {
  const h = s.held;
  const lines = [
    `pending      ${s.pending}${s.pending ? `  (oldest ${age(s.oldestPendingAgeSec)})` : ''}`,
    `dead         ${s.dead}${s.dead ? '  (see: edge-agent queue list --dead)' : ''}`,
    `delivered    ${s.delivered}  (last delivery ${s.lastDeliveryAt ?? 'never'})`,
    `unsynced     ${s.unsynced}${s.unsynced ? '  (taken while the clock was not trusted; held until corrected or released)' : ''}`,
    `cap          ${s.maxPending} pending+dead: ${s.capFullPercent} % full, room for ${s.capRoom} more${s.capFullPercent >= 90 ? '  (nearly full: new punches are refused at the cap)' : ''}`,
  ];
  for (const [sink, c] of Object.entries(s.perSink)) lines.push(`  ${sink.padEnd(10)} pending ${c.pending}, dead ${c.dead}`);
  lines.push(
    `clock        ${clock.trusted ? 'trusted' : 'NOT TRUSTED'} (${clock.source}): ${clock.detail}`,
    `last step    ${clock.lastStep ? `${signed(clock.lastStep.sizeSec)} at ${clock.lastStep.at} (${clock.steps} seen)` : 'none seen'}`,
    `held         ${h.clock} waiting for a trusted clock${h.oldestClockSec !== null ? ` (oldest ${age(h.oldestClockSec)})` : ''}, ${h.earlierBoot} of an earlier boot waiting for a decision${h.earlierBoot ? ' (edge-agent queue release-unsynced)' : ''}, ${h.review} for review`,
  );
  for (const a of alerts) lines.push(`ALERT        ${a.code}: ${a.message}`, `             → ${a.hint}`);
  write(`${lines.join('\n')}\n`);
}

function printList(rows: ListedEvent[], dead: boolean): void {
  if (rows.length === 0) {
    out(dead ? 'no dead letters\n' : 'nothing pending\n');
    return;
  }
  for (const r of rows) {
    const mark =
      r.timeSource === 'manual'
        ? '  (time given by hand)'
        : r.clockSynced
          ? ''
          : r.clockCorrected
            ? '  (clock corrected)'
            : r.clockReleased
              ? '  (clock not trusted; released as it is)'
              : '  (clock not trusted; held)';
    const head = `${r.id}  ${r.employeeCode}  ${r.direction.padEnd(3)}  ${r.localTime}${mark}`;
    const lines = [head];
    for (const d of r.deliveries) {
      if (d.state === 'delivered') continue;
      const what =
        d.state === 'dead'
          ? `DEAD ${d.lastStatus ?? ''}: ${d.lastError ?? ''}`
          : `pending, ${d.attempts} attempt(s)${d.lastError ? `, last: ${d.lastError}` : ''}`;
      lines.push(`    ${d.sink}: ${what}`);
    }
    out(`${lines.join('\n')}\n`);
  }
}

type Snapshot = { s: OutboxStatus; clock: ClockReport; alerts: Alert[] };

/**
 * `queue status --watch`: every second the counts again. On a terminal the status is redrawn in
 * place with the drain of the backlog seen since the start (a bar, the rate, the time left); a
 * pipe gets a line (or a JSON line) each time pending, dead or delivered change. Until Ctrl-C.
 */
async function watchStatus(json: boolean, first: Snapshot, read: () => Promise<Snapshot>): Promise<void> {
  const { isInteractive, redrawScreen } = await import('../screen.js');
  const { progressLine } = await import('../progress.js');
  const tty = !json && isInteractive();
  const start = Date.now();
  let peak = first.s.pending;
  let lastKey = '';
  let stop = false;
  const onSignal = () => {
    stop = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let snap = first; !stop; snap = await read()) {
      const { s } = snap;
      peak = Math.max(peak, s.pending);
      const drained = peak - s.pending;
      if (tty) {
        const drain =
          s.pending === 0 && peak > 0
            ? `drained ${peak} punch(es) in ${Math.round((Date.now() - start) / 1000)} s`
            : progressLine('draining', drained, peak, Date.now() - start, 'punches');
        let text = '';
        printStatus(s, snap.clock, snap.alerts, (t) => (text += t));
        redrawScreen(`${text}\n${drain}\n(watching; Ctrl-C stops)`);
      } else {
        const key = `${s.pending}/${s.dead}/${s.delivered}`;
        if (key !== lastKey) {
          if (json)
            printJson({
              at: new Date().toISOString(),
              pending: s.pending,
              dead: s.dead,
              delivered: s.delivered,
              oldestPendingAgeSec: s.oldestPendingAgeSec,
            });
          else
            process.stdout.write(
              `${new Date().toTimeString().slice(0, 8)}  pending ${s.pending}  dead ${s.dead}  delivered ${s.delivered}\n`,
            );
          lastKey = key;
        }
      }
      for (let i = 0; i < 10 && !stop; i++) await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

type Values = CommonValues & {
  dead?: boolean;
  id?: string[];
  limit?: string;
  json?: boolean;
  all?: boolean;
  yes?: boolean;
  watch?: boolean;
};

/** Opens this terminal's outbox (works while the agent runs), runs `fn`, closes it. */
async function withOutbox(values: Values, fn: (outbox: Outbox, config: AgentConfig) => Promise<void>): Promise<number> {
  const { configForFlags } = await import('../../config/load.js');
  const { openOutbox } = await import('../../daemon/components/outbox.js');
  const config = configForFlags(values, process.env, { command: 'edge-agent queue' });
  const { db, outbox } = await openOutbox(config);
  try {
    await fn(outbox, config);
    return 0;
  } finally {
    await db.close();
  }
}

export default function register(program: Command): Command {
  const queue = defineCommand(program, {
    name: 'queue',
    summary: 'show, retry or purge the outbox (pending punches and dead letters)',
    audience: 'technician',
    details: 'Looks at the outbox of this terminal; works while the agent runs.',
  });
  withVerbs(queue);

  const status = defineCommand(queue, {
    name: 'status',
    summary:
      'counts: pending, dead letters, delivered (kept for outbox.retentionDays), age of the oldest pending punch, last delivery; the cap and how full it is; the clock (trusted or not, the last step) and the punches held for it, with alerts',
  });
  status.option(
    '--watch',
    'keep looking (Ctrl-C to stop): on a terminal the counts are redrawn in place with the drain of the backlog (rate, time left); otherwise a line (--json: a JSON line) each time they change',
  );
  withCommonOptions(withJson(status));
  action<Values>(status, (values) =>
    withOutbox(values, async (outbox, config) => {
      const { clockReport } = await import('../../setup/clock-report.js');
      const { clockAlerts } = await import('../../ops/alerts.js');
      const read = async () => {
        const clock = await clockReport(outbox.db, config);
        const s = await outbox.status({ anchoredBoots: clock.anchoredBoots });
        const alerts = clockAlerts({ held: s.held, holdAlertHours: config.outbox.unsyncedHoldHours, clockDetail: clock.detail });
        return { s, clock, alerts };
      };
      const first = await read();
      if (!values.watch) {
        if (values.json) printJson({ ...first.s, clock: first.clock, alerts: first.alerts });
        else printStatus(first.s, first.clock, first.alerts);
        return;
      }
      await watchStatus(values.json === true, first, read);
    }),
  );

  const list = defineCommand(queue, {
    name: 'list',
    summary: 'pending punches, oldest first; with --dead the dead letters with the status and reason each upstream gave',
  })
    .option('--dead', 'the dead letters instead of the pending punches')
    .option('--limit <n>', 'at most N rows (default 100)');
  withCommonOptions(withJson(list));
  action<Values>(list, (values) =>
    withOutbox(values, async (outbox) => {
      const rows = await outbox.list({ dead: values.dead ?? false, limit: intFlag('limit', values.limit, 100)! });
      if (values.json) printJson(rows);
      else printList(rows, values.dead ?? false);
    }),
  );

  const retry = defineCommand(queue, {
    name: 'retry',
    summary: 'sends the dead letters again (all, or --id) once the cause is fixed, e.g. the employee was added on the service',
  }).addOption(repeatable('--id <id>', 'one dead letter (repeatable)'));
  withCommonOptions(withJson(retry));
  action<Values>(retry, async (values) => {
    let code = 0;
    await withOutbox(values, async (outbox) => {
      // An id that is not a dead letter is said to be so, not taken for "no dead letters".
      const unknown: string[] = [];
      const notDead: Array<{ id: string; state: string }> = [];
      for (const id of values.id ?? []) {
        const e = await outbox.get(id);
        if (!e) unknown.push(id);
        else if (e.state !== 'dead') notDead.push({ id, state: e.state });
      }
      const ids = (values.id ?? []).filter((id) => !unknown.includes(id) && !notDead.some((x) => x.id === id));
      const n = values.id?.length ? (ids.length ? await outbox.retryDead(ids) : 0) : await outbox.retryDead();
      if (unknown.length || notDead.length) code = 1;
      if (values.json) printJson({ retried: n, ...(values.id?.length ? { unknown, notDead } : {}) });
      else {
        for (const id of unknown) process.stdout.write(`${id}: no such punch in this outbox (ids: edge-agent queue list --dead)\n`);
        for (const x of notDead) process.stdout.write(`${x.id}: not a dead letter (it is ${x.state}); nothing to retry\n`);
        if (n || !values.id?.length)
          process.stdout.write(n ? `${n} dead letter(s) queued again; the running agent delivers them\n` : 'no dead letters to retry\n');
      }
    });
    return code;
  });

  const purge = defineCommand(queue, {
    name: 'purge',
    summary:
      'deletes delivered punches now; with --dead deletes the dead letters, after asking (or --yes) (pending punches are never purged)',
  })
    .option('--dead', 'delete the dead letters instead of the delivered punches (they were never delivered: asks first)')
    .option('--yes', 'do not ask (needed for --dead when stdin is not a terminal)');
  withCommonOptions(withJson(purge));
  action<Values>(purge, async (values) => {
    let code = 0;
    await withOutbox(values, async (outbox) => {
      if (values.dead) {
        const { confirmed } = await import('../confirm.js');
        const { dead } = await outbox.status();
        if (dead === 0) {
          if (values.json) printJson({ dead: 0, delivered: 0 });
          else process.stdout.write('no dead letters to delete\n');
          return;
        }
        if (
          !(await confirmed(
            `Delete ${dead} dead letter(s)? They were never delivered and cannot be sent again (edge-agent queue list --dead shows them).`,
            values.yes,
            'queue purge --dead',
          ))
        ) {
          process.stdout.write('nothing deleted\n');
          code = 1;
          return;
        }
      }
      const r = await outbox.purge({ dead: values.dead ?? false, delivered: !values.dead });
      if (values.json) printJson(r);
      else process.stdout.write(values.dead ? `deleted ${r.dead} dead letter(s)\n` : `deleted ${r.delivered} delivered punch(es)\n`);
    });
    return code;
  });
  const release = defineCommand(queue, {
    name: 'release-unsynced',
    summary: 'sends the punches of an earlier boot that the clock cannot correct as they are, marked (a decision: their time may be wrong)',
    details: `A punch taken while the clock was not trusted is held until its time is corrected from the
monotonic clock. A punch of an earlier boot that never had a trusted time cannot be corrected
(the monotonic clock restarted): it waits for this decision (or clock.earlierBootPunches: send).
Released punches keep clockSynced false and get clockReleased true. What a trusted time of its
boot can still correct is corrected first. Works while the agent runs.`,
  })
    .addOption(repeatable('--id <id>', 'only this punch (repeatable)'))
    .option('--all', "also this boot's punches still waiting for a trusted clock (when it will not be trusted soon)");
  withCommonOptions(withJson(release));
  action<Values>(release, (values) =>
    withOutbox(values, async (outbox) => {
      const { releaseUnsynced } = await import('../../terminal/time-authority.js');
      const r = await releaseUnsynced(outbox.db, outbox, { ...(values.id?.length ? { ids: values.id } : {}), all: values.all ?? false });
      if (values.json) printJson(r);
      else {
        const corrected = r.corrected ? `; ${r.corrected} corrected from a trusted time of their boot first` : '';
        process.stdout.write(
          r.released
            ? `${r.released} punch(es) released: the running agent sends them as they are, marked${corrected}\n`
            : `nothing to release${corrected}\n`,
        );
      }
    }),
  );

  return queue;
}
