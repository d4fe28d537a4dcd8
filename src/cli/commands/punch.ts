/**
 * Tested in test/integration/outbox-cli.test.ts, test/integration/cli-management.test.ts and
 * test/integration/crash.test.ts (edge-agent punch recording into the outbox).
 */
import { createHash } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { action, defineCommand, printJson, usageError, withJson } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import { AgentError } from '../../core/errors.js';
import type { AgentConfig } from '../../config/config.js';
import { formatLocal, LOCAL_TIME_RE, parseLocal, zoneOffsetMinutes } from '../../store/local-time.js';
import type { Outbox, PunchInput } from '../../store/outbox.js';
import { derivedUlid } from '../../store/ulid.js';
import type { PunchClock, PunchResult } from '../../terminal/punch-policy.js';

/** `--tz` / import `tz`: a number in the configured unit, or `±HH:MM`. Returns minutes. */
export function parseTz(value: unknown, config: AgentConfig, where: string): number {
  if (typeof value === 'string' && /^[+-]\d{1,2}:\d{2}$/.test(value.trim())) {
    const [h, m] = value.trim().slice(1).split(':').map(Number) as [number, number];
    return (value.trim()[0] === '-' ? -1 : 1) * (h * 60 + m);
  }
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  const minutes = config.api.tzOffsetUnit === 'hours' ? Math.round(n * 60) : n;
  if (!Number.isInteger(minutes) || Math.abs(minutes) > 14 * 60) {
    throw new AgentError(
      'CLI_USAGE',
      `${where}: tz "${String(value)}" is not an offset (${config.api.tzOffsetUnit} east of UTC, or +HH:MM)`,
      { value },
      { hint: 'write e.g. 60 (minutes) or +01:00' },
    );
  }
  return minutes;
}

const IMPORT_CHUNK = 1000;

/** What an import recorded, what it found recorded by an earlier run of the same import, and under which import id. */
export interface ImportResult {
  recorded: number;
  skipped: number;
  importId: string;
}

/**
 * A file of punches, line by line (blank lines skipped, numbered as in the file), its bytes also
 * given to `onBytes`. Read twice by `importFile`, so an import of a million lines never holds them all.
 */
async function* importLines(file: string, onBytes?: (chunk: Buffer) => void): AsyncGenerator<{ line: string; n: number }> {
  let stream: ReadStream;
  try {
    stream = createReadStream(file);
    await new Promise<void>((resolve, reject) => stream!.once('open', () => resolve()).once('error', reject));
  } catch (err) {
    throw new AgentError(
      'CLI_IMPORT_UNREADABLE',
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { file },
      { hint: 'check the path', cause: err },
    );
  }
  if (onBytes) stream.on('data', (chunk) => onBytes(chunk as Buffer));
  let n = 0;
  const lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await lines.next();
    } catch (err) {
      throw new AgentError(
        'CLI_IMPORT_UNREADABLE',
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { file },
        { hint: 'give a file of JSON lines', cause: err },
      );
    }
    if (next.done) return;
    n++;
    if (next.value.trim() !== '') yield { line: next.value, n };
  }
}

/**
 * Turns line n of an import into a punch (check-outs carry the inTime of the file's check-in
 * before them), or throws naming the line. The punch's id is derived from the import id and the
 * line number ("" while the import id is not known yet: the first pass only checks).
 */
function importParser(file: string, config: AgentConfig, clock: PunchClock, importId: string): (line: string, n: number) => PunchInput {
  const openIn = new Map<string, { localTime: string; instant: number }>();
  const stamp = clock.stamp();
  return (line, n) => {
    const where = `${file} line ${n}`;
    let row: { code?: unknown; direction?: unknown; at?: unknown; tz?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      throw new AgentError(
        'CLI_IMPORT_BAD_LINE',
        `${where} is not JSON`,
        { file, line: n },
        { hint: 'each line is one object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00","tz":60}' },
      );
    }
    const bad = (what: string) =>
      new AgentError(
        'CLI_IMPORT_BAD_LINE',
        `${where}: ${what}`,
        { file, line: n },
        { hint: 'each line is one object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00","tz":60}; nothing was recorded' },
      );
    if (typeof row !== 'object' || row === null) throw bad('not an object');
    if (typeof row.code !== 'string' || row.code.trim() === '') throw bad('"code" is missing');
    if (row.direction !== 'in' && row.direction !== 'out') throw bad('"direction" must be "in" or "out"');
    if (typeof row.at !== 'string' || !LOCAL_TIME_RE.test(row.at)) throw bad('"at" must be "yyyy-MM-dd HH:mm:ss"');
    const tz =
      row.tz === undefined || row.tz === null
        ? zoneOffsetMinutes(config.terminal.timeZone, parseLocal(row.at, 0))
        : parseTz(row.tz, config, where);
    const instant = parseLocal(row.at, tz);
    if (stamp.trusted && instant > stamp.wallMs + 60_000)
      throw bad(`"at" ${row.at} is in the future (the clock, trusted, says ${formatLocal(stamp.wallMs, tz)})`);
    const code = row.code.trim();
    const p: PunchInput = {
      employeeCode: code,
      direction: row.direction,
      localTime: row.at,
      tzOffset: tz,
      source: 'manual',
      terminalId: config.terminal.id,
      shift: config.policy.shift,
      timeSource: 'manual',
      clockSynced: true,
      createdAt: stamp.wallMs,
      bootId: stamp.bootId,
      monotonicMs: stamp.monoMs,
      id: derivedUlid(instant, `${importId}:${n}`),
    };
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
 * An import is a person's statement of times: every punch is marked `timeSource: manual` and goes
 * through the time authority, which refuses a time in the future of a trusted clock.
 *
 * Each line gets a stable id (`derivedUlid` of its time and `<import id>:<line number>`); the
 * import id is `--import-id`, or the SHA-256 of the file's content. Importing the same file again
 * (after a crash half-way, or by mistake) records only what is missing and counts the rest as
 * skipped; MQTT consumers, which drop repeats by id, see each punch once.
 *
 * Three passes over the file, so a million lines are never all in memory: the first checks every
 * line (a bad one is named and nothing is recorded), hashes the file and counts the lines; the
 * second finds what an earlier run recorded, the cap is checked for the rest of the whole
 * file before anything is written, and the third records a thousand punches per transaction.
 */
async function importFile(
  file: string,
  config: AgentConfig,
  outbox: Outbox,
  clock: PunchClock,
  givenImportId?: string,
): Promise<ImportResult> {
  const hash = createHash('sha256');
  let total = 0;
  const check = importParser(file, config, clock, givenImportId ?? '');
  for await (const { line, n } of importLines(file, givenImportId === undefined ? (b) => hash.update(b) : undefined)) {
    const p = check(line, n);
    try {
      outbox.validate(p);
    } catch (err) {
      if (err instanceof AgentError)
        throw new AgentError(
          err.code,
          `${file} line ${n}: ${err.message}`,
          { ...err.context, file, line: n },
          { hint: `${err.hint ?? ''}; nothing was recorded`.replace(/^; /, ''), cause: err },
        );
      throw err;
    }
    total++;
  }
  const importId = givenImportId ?? `sha256:${hash.digest('hex')}`;
  const chunks = async function* (): AsyncGenerator<PunchInput[]> {
    const parse = importParser(file, config, clock, importId);
    const chunk: PunchInput[] = [];
    for await (const { line, n } of importLines(file)) {
      chunk.push(parse(line, n));
      if (chunk.length === IMPORT_CHUNK) yield chunk.splice(0);
    }
    if (chunk.length) yield chunk;
  };
  let present = 0;
  for await (const chunk of chunks()) present += await outbox.countRecorded(chunk);
  await outbox.ensureRoom(total - present);
  const { progress } = await import('../progress.js');
  const bar = progress(`importing ${file}`, { total, unit: 'punches' });
  let recorded = 0;
  let skipped = 0;
  try {
    for await (const chunk of chunks()) {
      try {
        const r = await outbox.recordMany(chunk, IMPORT_CHUNK);
        recorded += r.ids.length;
        skipped += r.skipped;
      } catch (err) {
        if (err instanceof AgentError) Object.assign(err.context, { recorded, skipped });
        throw err;
      }
      bar.update(recorded + skipped, total);
    }
  } finally {
    bar.finish();
  }
  return { recorded, skipped, importId };
}

type Values = CommonValues & {
  code?: string;
  in?: boolean;
  out?: boolean;
  at?: string;
  tz?: string;
  import?: string;
  'import-id'?: string;
  json?: boolean;
};

function describePunch(result: PunchResult, code: string, dedupeWindowSec: number): string {
  if (!result.recorded)
    return `not recorded: ${code} punched ${Math.abs(result.secondsAgo)} s ${result.secondsAgo >= 0 ? 'ago' : 'later'} (id ${result.previousId}), inside the ${dedupeWindowSec} s dedupe window\n`;
  const clock =
    result.timeSource === 'manual'
      ? ' (time given by hand)'
      : result.clockTrusted
        ? ''
        : ' (clock not trusted: held until its time is corrected)';
  return `recorded ${result.direction === 'in' ? 'check-in' : 'check-out'} of ${code} at ${result.localTime} (tzOffset ${result.tzOffset} min)${clock}${result.inTime ? `, closing the check-in of ${result.inTime}` : ''}; id ${result.id}\n`;
}

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'punch',
    summary: 'record a manual punch (or import many) into the outbox',
    audience: 'technician',
    details: `Records a manual punch through the same policy (mode, dedupe, check-out closing its check-in)
and the same time authority as a scanner: while the agent runs it records it itself; otherwise
this command judges the clock the same way. Without --at the punch gets the clock's time, marked
and held like a scanner's while the clock is not trusted; with --at (and in an import) the time
is a person's, marked manual. The running agent delivers it.
  edge-agent punch --code C [--in|--out] [--at "yyyy-MM-dd HH:mm:ss"] [--tz N]
  edge-agent punch --import FILE [--import-id ID]
An import can be run again (after a crash half-way): each line has a stable id, from the file's
content hash (or --import-id) and its line number, so only what is missing is recorded.`,
  })
    .option('--code <code>', 'employee code')
    .option('--in', 'a check-in (default: the terminal mode; toggle closes an open check-in)')
    .option('--out', 'a check-out')
    .option('--at <time>', 'local time of the punch, "yyyy-MM-dd HH:mm:ss" (default now, from the clock); marked manual')
    .option(
      '--tz <offset>',
      "offset east of UTC of that time, in the configured api.tzOffsetUnit (minutes by default), or as +HH:MM (default: the terminal time zone's offset)",
    )
    .option(
      '--import <file>',
      'JSON lines {"code", "direction": "in"|"out", "at": "yyyy-MM-dd HH:mm:ss", "tz"} recorded as they are (no dedupe, marked manual), one transaction per thousand; every line is checked, and the outbox cap for the whole file, before anything is recorded; run again, it records only what is missing',
    )
    .option(
      '--import-id <id>',
      "names the import instead of the file's content hash: each line's id is derived from it and the line number, so a copy of the file with lines added at its end still skips the lines recorded before",
    );
  withJson(cmd);
  withCommonOptions(cmd);
  return action<Values>(cmd, async (values) => {
    const { configForFlags } = await import('../../config/load.js');
    const { openOutbox } = await import('../../daemon/components/outbox.js');
    const { TimeAuthority } = await import('../../terminal/time-authority.js');
    const { PunchPolicy } = await import('../../terminal/punch-policy.js');
    const { callDaemon, controlSocketPath, isDaemonListening } = await import('../../daemon/control-socket.js');
    if (values.in && values.out) throw usageError('punch', 'give --in or --out, not both');
    if (!values.import && !values.code) throw usageError('punch', 'punch needs --code C (or --import FILE)');
    if (values.import && (values.code || values.at || values.in || values.out))
      throw usageError('punch', '--import takes its punches from the file; leave out --code, --at, --in and --out');
    if (values['import-id'] !== undefined && !values.import)
      throw usageError('punch', '--import-id names an import: give --import FILE too');
    if (values['import-id'] !== undefined && !/^[\x21-\x7e]{1,128}$/.test(values['import-id']))
      throw usageError('punch', '--import-id is 1 to 128 printable ASCII characters without spaces', { flag: 'import-id' });
    const config = configForFlags(values, process.env, { command: 'edge-agent punch' });
    const request = values.import
      ? null
      : {
          employeeCode: values.code!,
          source: 'manual' as const,
          ...(values.at ? { at: values.at } : {}),
          ...(values.tz !== undefined ? { tzOffset: parseTz(values.tz, config, '--tz') } : {}),
          ...(values.in ? { direction: 'in' as const } : values.out ? { direction: 'out' as const } : {}),
        };
    const print = (result: PunchResult) => {
      if (values.json) printJson(result);
      else process.stdout.write(describePunch(result, values.code!, config.policy.dedupeWindowSec));
    };
    // The running agent records it itself: its time authority knows the steps it has seen.
    const socket = controlSocketPath(config.dataDir);
    if (request && (await isDaemonListening(socket))) {
      print((await callDaemon(socket, 'punch', request)) as PunchResult);
      return 0;
    }
    const { db, outbox } = await openOutbox(config);
    const time = TimeAuthority.fromConfig(config, db, outbox);
    try {
      await time.start({ tick: false });
      if (!request) {
        const r = await importFile(values.import!, config, outbox, time, values['import-id']);
        if (values.json) printJson(r);
        else
          process.stdout.write(
            `imported ${r.recorded} punch(es) from ${values.import} into the outbox${r.skipped ? `; skipped ${r.skipped} already recorded by an earlier run of this import (${r.importId})` : ''}\n`,
          );
        return 0;
      }
      print(await PunchPolicy.fromConfig(config, outbox, time).punch(request));
      return 0;
    } finally {
      await time.stop();
      await db.close();
    }
  });
}
