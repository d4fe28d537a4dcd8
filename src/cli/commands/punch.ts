import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { action, defineCommand, printJson, usageError, withJson } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import { AgentError } from '../../core/errors.js';
import type { AgentConfig } from '../../config/config.js';
import { LOCAL_TIME_RE, parseLocal, zoneOffsetMinutes } from '../../store/local-time.js';
import type { Outbox, PunchInput } from '../../store/outbox.js';

/** `--tz` / import `tz`: a number in the configured unit, or `±HH:MM`. Returns minutes. */
export function parseTz(value: unknown, config: AgentConfig, where: string): number {
  if (typeof value === 'string' && /^[+-]\d{1,2}:\d{2}$/.test(value.trim())) {
    const [h, m] = value.trim().slice(1).split(':').map(Number) as [number, number];
    return (value.trim()[0] === '-' ? -1 : 1) * (h * 60 + m);
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  const minutes = config.api.tzOffsetUnit === 'hours' ? Math.round(n * 60) : n;
  if (!Number.isInteger(minutes) || Math.abs(minutes) > 14 * 60) {
    throw new AgentError('CLI_USAGE', `${where}: tz "${String(value)}" is not an offset (${config.api.tzOffsetUnit} east of UTC, or +HH:MM)`, { value }, { hint: 'write e.g. 60 (minutes) or +01:00' });
  }
  return minutes;
}

const IMPORT_CHUNK = 1000;

/**
 * A file of punches, line by line: `parse` turns line i into a punch (check-outs carry the inTime
 * of the file's check-in before them), or throws naming the line. Read twice by `importFile`, so an
 * import of a million lines never holds them all.
 */
async function* importLines(file: string): AsyncGenerator<{ line: string; n: number }> {
  let stream;
  try {
    stream = createReadStream(file, { encoding: 'utf8' });
    await new Promise<void>((resolve, reject) => stream!.once('open', () => resolve()).once('error', reject));
  } catch (err) {
    throw new AgentError('CLI_IMPORT_UNREADABLE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { file }, { hint: 'check the path', cause: err });
  }
  let n = 0;
  const lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await lines.next();
    } catch (err) {
      throw new AgentError('CLI_IMPORT_UNREADABLE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { file }, { hint: 'give a file of JSON lines', cause: err });
    }
    if (next.done) return;
    n++;
    if (next.value.trim() !== '') yield { line: next.value, n };
  }
}

function importParser(file: string, config: AgentConfig): (line: string, n: number) => PunchInput {
  const openIn = new Map<string, { localTime: string; instant: number }>();
  return (line, n) => {
    const where = `${file} line ${n}`;
    let row: { code?: unknown; direction?: unknown; at?: unknown; tz?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      throw new AgentError('CLI_IMPORT_BAD_LINE', `${where} is not JSON`, { file, line: n }, { hint: 'each line is one object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00","tz":60}' });
    }
    const bad = (what: string) => new AgentError('CLI_IMPORT_BAD_LINE', `${where}: ${what}`, { file, line: n }, { hint: 'each line is one object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00","tz":60}; nothing was recorded' });
    if (typeof row !== 'object' || row === null) throw bad('not an object');
    if (typeof row.code !== 'string' || row.code.trim() === '') throw bad('"code" is missing');
    if (row.direction !== 'in' && row.direction !== 'out') throw bad('"direction" must be "in" or "out"');
    if (typeof row.at !== 'string' || !LOCAL_TIME_RE.test(row.at)) throw bad('"at" must be "yyyy-MM-dd HH:mm:ss"');
    const tz = row.tz === undefined || row.tz === null ? zoneOffsetMinutes(config.terminal.timeZone, parseLocal(row.at, 0)) : parseTz(row.tz, config, where);
    const instant = parseLocal(row.at, tz);
    const code = row.code.trim();
    const p: PunchInput = { employeeCode: code, direction: row.direction, localTime: row.at, tzOffset: tz, source: 'manual', terminalId: config.terminal.id, shift: config.policy.shift };
    if (row.direction === 'in') openIn.set(code, { localTime: row.at, instant });
    else {
      const open = openIn.get(code);
      if (open && instant >= open.instant && instant - open.instant <= config.policy.maxShiftHours * 3_600_000) p.inTime = open.localTime;
      openIn.delete(code);
    }
    return p;
  };
}

/**
 * Imports a file in two passes: the first checks every line (a bad one is named and nothing is
 * recorded) and counts them, the cap is checked for the whole file, the second records a
 * thousand punches per transaction.
 */
async function importFile(file: string, config: AgentConfig, outbox: Outbox): Promise<{ recorded: number }> {
  let total = 0;
  const check = importParser(file, config);
  for await (const { line, n } of importLines(file)) {
    const p = check(line, n);
    try {
      outbox.validate(p);
    } catch (err) {
      if (err instanceof AgentError) throw new AgentError(err.code, `${file} line ${n}: ${err.message}`, { ...err.context, file, line: n }, { hint: `${err.hint ?? ''}; nothing was recorded`.replace(/^; /, ''), cause: err });
      throw err;
    }
    total++;
  }
  await outbox.ensureRoom(total);
  const parse = importParser(file, config);
  let recorded = 0;
  let chunk: PunchInput[] = [];
  const flush = async () => {
    try {
      recorded += (await outbox.recordMany(chunk)).ids.length;
    } catch (err) {
      if (err instanceof AgentError) err.context.recorded = recorded;
      throw err;
    }
    chunk = [];
  };
  for await (const { line, n } of importLines(file)) {
    chunk.push(parse(line, n));
    if (chunk.length === IMPORT_CHUNK) await flush();
  }
  if (chunk.length) await flush();
  return { recorded };
}

type Values = CommonValues & { code?: string; in?: boolean; out?: boolean; at?: string; tz?: string; import?: string; json?: boolean };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'punch',
    summary: 'record a manual punch (or import many) into the outbox',
    audience: 'technician',
    details: `Records a manual punch through the same policy (mode, dedupe, check-out closing its check-in)
and the same durable outbox as a scanner; it is delivered by the running agent.
  edge-agent punch --code C [--in|--out] [--at "yyyy-MM-dd HH:mm:ss"] [--tz N]
  edge-agent punch --import FILE`,
  })
    .option('--code <code>', 'employee code')
    .option('--in', 'a check-in (default: the terminal mode; toggle closes an open check-in)')
    .option('--out', 'a check-out')
    .option('--at <time>', 'local time of the punch, "yyyy-MM-dd HH:mm:ss" (default now)')
    .option('--tz <offset>', "offset east of UTC of that time, in the configured api.tzOffsetUnit (minutes by default), or as +HH:MM (default: the terminal time zone's offset)")
    .option('--import <file>', 'JSON lines {"code", "direction": "in"|"out", "at": "yyyy-MM-dd HH:mm:ss", "tz"} recorded as they are (no dedupe), one transaction per thousand; every line is checked, and the outbox cap for the whole file, before anything is recorded');
  withJson(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    const { configForFlags } = await import('../../config/load.js');
    const { openOutbox } = await import('../../daemon/daemon.js');
    const { PunchPolicy } = await import('../../terminal/punch-policy.js');
    if (values.in && values.out) throw usageError('punch', 'give --in or --out, not both');
    if (!values.import && !values.code) throw usageError('punch', 'punch needs --code C (or --import FILE)');
    if (values.import && (values.code || values.at || values.in || values.out)) throw usageError('punch', '--import takes its punches from the file; leave out --code, --at, --in and --out');
    const config = configForFlags(values);
    const { db, outbox } = await openOutbox(config);
    try {
      if (values.import) {
        const r = await importFile(values.import, config, outbox);
        if (values.json) printJson(r);
        else process.stdout.write(`imported ${r.recorded} punch(es) from ${values.import} into the outbox\n`);
        return 0;
      }
      const policy = PunchPolicy.fromConfig(config, outbox);
      const result = await policy.punch({
        employeeCode: values.code!,
        source: 'manual',
        ...(values.at ? { at: values.at } : {}),
        ...(values.tz !== undefined ? { tzOffset: parseTz(values.tz, config, '--tz') } : {}),
        ...(values.in ? { direction: 'in' as const } : values.out ? { direction: 'out' as const } : {}),
      });
      if (values.json) printJson(result);
      else if (result.recorded) {
        process.stdout.write(`recorded ${result.direction === 'in' ? 'check-in' : 'check-out'} of ${values.code} at ${result.localTime} (tzOffset ${result.tzOffset} min)${result.inTime ? `, closing the check-in of ${result.inTime}` : ''}; id ${result.id}\n`);
      } else {
        process.stdout.write(`not recorded: ${values.code} punched ${Math.abs(result.secondsAgo)} s ${result.secondsAgo >= 0 ? 'ago' : 'later'} (id ${result.previousId}), inside the ${config.policy.dedupeWindowSec} s dedupe window\n`);
      }
      return 0;
    } finally {
      await db.close();
    }
  });
}
