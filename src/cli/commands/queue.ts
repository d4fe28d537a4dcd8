import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, repeatable, withJson, withVerbs } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import type { Outbox, ListedEvent, OutboxStatus } from '../../store/outbox.js';

function age(sec: number | null): string {
  if (sec === null) return '-';
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  if (sec < 172_800) return `${Math.round(sec / 3600)} h`;
  return `${Math.round(sec / 86_400)} days`;
}

function printStatus(s: OutboxStatus): void {
  const lines = [
    `pending      ${s.pending}${s.pending ? `  (oldest ${age(s.oldestPendingAgeSec)})` : ''}`,
    `dead         ${s.dead}${s.dead ? '  (see: edge-agent queue list --dead)' : ''}`,
    `delivered    ${s.delivered}  (last delivery ${s.lastDeliveryAt ?? 'never'})`,
    `unsynced     ${s.unsynced}${s.unsynced ? '  (taken before the clock synchronized; held until corrected)' : ''}`,
    `cap          ${s.maxPending} pending+dead: ${s.capFullPercent} % full, room for ${s.capRoom} more${s.capFullPercent >= 90 ? '  (nearly full: new punches are refused at the cap)' : ''}`,
  ];
  for (const [sink, c] of Object.entries(s.perSink)) lines.push(`  ${sink.padEnd(10)} pending ${c.pending}, dead ${c.dead}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function printList(rows: ListedEvent[], dead: boolean): void {
  if (rows.length === 0) {
    process.stdout.write(dead ? 'no dead letters\n' : 'nothing pending\n');
    return;
  }
  for (const r of rows) {
    const head = `${r.id}  ${r.employeeCode}  ${r.direction.padEnd(3)}  ${r.localTime}${r.clockSynced ? '' : r.clockCorrected ? '  (clock corrected)' : '  (clock not synchronized)'}`;
    const lines = [head];
    for (const d of r.deliveries) {
      if (d.state === 'delivered') continue;
      const what = d.state === 'dead' ? `DEAD ${d.lastStatus ?? ''}: ${d.lastError ?? ''}` : `pending, ${d.attempts} attempt(s)${d.lastError ? `, last: ${d.lastError}` : ''}`;
      lines.push(`    ${d.sink}: ${what}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

type Values = CommonValues & { dead?: boolean; id?: string[]; limit?: string; json?: boolean };

/** Opens this terminal's outbox (works while the agent runs), runs `fn`, closes it. */
async function withOutbox(values: Values, fn: (outbox: Outbox) => Promise<void>): Promise<number> {
  const { configForFlags } = await import('../../config/load.js');
  const { openOutbox } = await import('../../daemon/daemon.js');
  const { db, outbox } = await openOutbox(configForFlags(values));
  try {
    await fn(outbox);
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

  const status = defineCommand(queue, { name: 'status', summary: 'counts: pending, dead letters, delivered (kept for outbox.retentionDays), age of the oldest pending punch, last delivery, punches held for the clock, the cap and how full it is' });
  withCommonOptions(withJson(status));
  action<Values>(status, (values) =>
    withOutbox(values, async (outbox) => {
      const s = await outbox.status();
      if (values.json) printJson(s);
      else printStatus(s);
    }),
  );

  const list = defineCommand(queue, { name: 'list', summary: 'pending punches, oldest first; with --dead the dead letters with the status and reason each upstream gave' })
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

  const retry = defineCommand(queue, { name: 'retry', summary: 'sends the dead letters again (all, or --id) once the cause is fixed, e.g. the employee was added on the service' }).addOption(repeatable('--id <id>', 'one dead letter (repeatable)'));
  withCommonOptions(withJson(retry));
  action<Values>(retry, (values) =>
    withOutbox(values, async (outbox) => {
      const n = await outbox.retryDead(values.id?.length ? values.id : undefined);
      if (values.json) printJson({ retried: n });
      else process.stdout.write(n ? `${n} dead letter(s) queued again; the running agent delivers them\n` : 'no dead letters to retry\n');
    }),
  );

  const purge = defineCommand(queue, { name: 'purge', summary: 'deletes delivered punches now; with --dead deletes the dead letters (pending punches are never purged)' }).option('--dead', 'delete the dead letters instead of the delivered punches');
  withCommonOptions(withJson(purge));
  action<Values>(purge, (values) =>
    withOutbox(values, async (outbox) => {
      const r = await outbox.purge({ dead: values.dead ?? false, delivered: !values.dead });
      if (values.json) printJson(r);
      else process.stdout.write(values.dead ? `deleted ${r.dead} dead letter(s)\n` : `deleted ${r.delivered} delivered punch(es)\n`);
    }),
  );
  return queue;
}
