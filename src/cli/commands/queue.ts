import type { Command } from '../command.js';
import { intFlag, parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { COMMON_FLAGS } from '../../config/config.js';
import { configForFlags } from '../../config/load.js';
import { openOutbox } from '../../daemon/daemon.js';
import type { ListedEvent, OutboxStatus } from '../../store/outbox.js';

const usage = `usage: edge-agent queue status|list|retry|purge [--dead] [--json] [options]
  Looks at the outbox of this terminal (works while the agent runs).

  status          counts: pending, dead letters, delivered (kept for outbox.retentionDays),
                  age of the oldest pending punch, last delivery, punches held for the clock
  list            pending punches, oldest first; with --dead the dead letters with the
                  status and reason each upstream gave
  retry           sends the dead letters again (all, or --id ID, repeatable) once the cause
                  is fixed (e.g. the employee was added on the service)
  purge           deletes delivered punches now; with --dead deletes the dead letters
                  (pending punches are never purged)

  --dead          dead letters (list, purge)
  --id ID         one punch (retry; repeatable)
  --limit N       at most N rows (list; default 100)
  --json          JSON on stdout
  --config FILE, --data DIR, ... as for "edge-agent run"`;

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
    `cap          ${s.maxPending} pending+dead`,
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

const command: Command = {
  summary: 'show, retry or purge the outbox (pending punches and dead letters)',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...COMMON_FLAGS, dead: { type: 'boolean' }, json: { type: 'boolean' }, id: { type: 'string', multiple: true }, limit: { type: 'string' } },
      usage,
      true,
    );
    const verb = positionals[0];
    if (!verb || !['status', 'list', 'retry', 'purge'].includes(verb) || positionals.length > 1) {
      throw new AgentError('CLI_USAGE', verb ? `unknown queue verb "${positionals.join(' ')}"` : 'queue needs a verb', {}, { hint: usage });
    }
    const config = configForFlags(values);
    const { db, outbox } = await openOutbox(config);
    try {
      if (verb === 'status') {
        const s = await outbox.status();
        if (values.json) printJson(s);
        else printStatus(s);
      } else if (verb === 'list') {
        const rows = await outbox.list({ dead: values.dead ?? false, limit: intFlag('limit', values.limit, 100)! });
        if (values.json) printJson(rows);
        else printList(rows, values.dead ?? false);
      } else if (verb === 'retry') {
        const n = await outbox.retryDead(values.id?.length ? values.id : undefined);
        if (values.json) printJson({ retried: n });
        else process.stdout.write(n ? `${n} dead letter(s) queued again; the running agent delivers them\n` : 'no dead letters to retry\n');
      } else {
        const r = await outbox.purge({ dead: values.dead ?? false, delivered: !values.dead });
        if (values.json) printJson(r);
        else process.stdout.write(values.dead ? `deleted ${r.dead} dead letter(s)\n` : `deleted ${r.delivered} delivered punch(es)\n`);
      }
      return 0;
    } finally {
      await db.close();
    }
  },
};
export default command;
