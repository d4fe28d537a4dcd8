/**
 * The outbox through the real CLI: `punch` records, a child `edge-agent run` delivers to the real
 * service, a dead letter shows its reason in `queue list --dead`, the cause is fixed through the
 * API, `queue retry` sends it again and it is delivered; SIGTERM exits 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { outboxCounts } from '../helpers/agent.js';

let service: InProcessService;
let admin: AttendanceClient;
let dir: string;
let common: string[];

async function queueStatus(): Promise<{ pending: number; dead: number; delivered: number; oldestPendingAgeSec: number | null }> {
  const r = await runCli(['queue', 'status', '--json', ...common]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as never;
}

async function until(cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  service = await startService();
  admin = new AttendanceClient({ baseUrl: service.url, clientId: service.clientId, apiKey: service.apiKey, apiSecret: service.apiSecret });
  await admin.addOrUpdateUser({ employeeCode: '1042', firstName: 'Ada', lastName: 'Lovelace' });
  dir = mkdtempSync(join(tmpdir(), 'outbox-cli-'));
  const secretFile = join(dir, 'api-secret');
  writeFileSync(secretFile, `${service.apiSecret}\n`, { mode: 0o600 });
  common = [
    '--data',
    join(dir, 'data'),
    '--terminal',
    'gate-1',
    '--api',
    service.url,
    '--client-id',
    service.clientId,
    '--api-key',
    service.apiKey,
    '--api-secret-file',
    secretFile,
  ];
});
afterAll(async () => {
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('edge-agent punch / run / queue', () => {
  it('a dead letter shows its reason, is retried once the cause is fixed, and is delivered', async () => {
    const p1 = await runCli(['punch', '--code', '1042', '--in', '--at', '2026-03-02 07:58:00', '--tz', '60', ...common]);
    expect(p1.code, p1.stderr).toBe(0);
    expect(p1.stdout).toMatch(/recorded check-in of 1042 at 2026-03-02 07:58:00/);
    const p2 = await runCli(['punch', '--code', 'NEWBIE', '--in', '--at', '2026-03-02 08:03:00', '--tz', '60', '--json', ...common]);
    expect(JSON.parse(p2.stdout)).toMatchObject({ recorded: true, direction: 'in' });
    const dup = await runCli(['punch', '--code', 'NEWBIE', '--in', '--at', '2026-03-02 08:03:30', '--tz', '60', ...common]);
    expect(dup.stdout).toMatch(/not recorded: NEWBIE punched 30 s ago/);
    // A full-width look-alike of 1042 is refused, not recorded as a second person (nor folded into 1042).
    const wide = await runCli(['punch', '--code', '１０４２', '--in', '--at', '2026-03-02 08:05:00', '--tz', '60', ...common]);
    expect(wide.code).toBe(1);
    expect(wide.stderr).toMatch(
      /POLICY_BAD_PUNCH: the employee code "１０４２" holds U\+FF11, a compatibility form of "1".*write it as "1042"/,
    );
    expect(await queueStatus()).toMatchObject({ pending: 2, dead: 0, delivered: 0 });

    const agent = spawnCli(['run', ...common]);
    try {
      await waitForLine(agent, /edge-agent running/);
      await until(async () => (await outboxCounts(join(dir, 'data'))).dead === 1);
      expect(await queueStatus()).toMatchObject({ pending: 0, dead: 1, delivered: 1 });
      const list = await runCli(['queue', 'list', '--dead', ...common]);
      expect(list.stdout).toMatch(/NEWBIE\s+in\s+2026-03-02 08:03:00/);
      expect(list.stdout).toMatch(/api: DEAD USER_NOT_AVAILABLE: no user with employeeCode "NEWBIE"/);

      // The cause is fixed on the service; the technician retries.
      await admin.addOrUpdateUser({ employeeCode: 'NEWBIE', firstName: 'New', lastName: 'Hire' });
      const retry = await runCli(['queue', 'retry', ...common]);
      expect(retry.stdout).toMatch(/1 dead letter\(s\) queued again/);
      await until(async () => (await outboxCounts(join(dir, 'data'))).delivered === 2);
      expect(await queueStatus()).toMatchObject({ pending: 0, dead: 0, delivered: 2 });
      const events = await admin.getEvents({ code: 'NEWBIE', from: '2026-03-02 00:00:00', to: '2026-03-03 00:00:00' });
      expect(events.returnValue?.map((e) => e.returnValue?.inTime)).toEqual(['2026-03-02 08:03:00']);

      // A punch recorded while the agent runs goes at once; toggle closes the check-in.
      const out = await runCli(['punch', '--code', '1042', '--at', '2026-03-02 16:30:00', '--tz', '60', ...common]);
      expect(out.stdout).toMatch(/recorded check-out of 1042 .*closing the check-in of 2026-03-02 07:58:00/);
      await until(async () => (await outboxCounts(join(dir, 'data'))).delivered === 3);
      const closed = await admin.getEvents({ code: '1042', from: '2026-03-02 00:00:00', to: '2026-03-03 00:00:00' });
      expect(closed.returnValue?.map((e) => [e.returnValue?.inTime, e.returnValue?.outTime])).toEqual([
        ['2026-03-02 07:58:00', '2026-03-02 16:30:00'],
      ]);
    } finally {
      const exit = new Promise<number | null>((r) => agent.once('exit', (code) => r(code)));
      agent.kill('SIGTERM');
      expect(await exit).toBe(0);
    }
    const purge = await runCli(['queue', 'purge', ...common]);
    expect(purge.stdout).toMatch(/deleted 3 delivered punch/);
  }, 120_000); // a dozen CLI runs and an agent: far over the default on a loaded machine

  it('imports JSON lines in one go and says which line is wrong', async () => {
    const file = join(dir, 'paper-log.jsonl');
    writeFileSync(
      file,
      [
        '{"code":"1042","direction":"in","at":"2026-03-05 07:00:00","tz":60}',
        '{"code":"1042","direction":"out","at":"2026-03-05 15:00:00","tz":60}',
        '',
      ].join('\n'),
    );
    const ok = await runCli(['punch', '--import', file, ...common]);
    expect(ok.stdout).toMatch(/imported 2 punch/);
    const list = await runCli(['queue', 'list', '--json', ...common]);
    const rows = JSON.parse(list.stdout) as Array<{ direction: string; inTime: string | null }>;
    expect(rows.map((r) => [r.direction, r.inTime])).toEqual([
      ['in', null],
      ['out', '2026-03-05 07:00:00'],
    ]);
    writeFileSync(
      file,
      '{"code":"1042","direction":"in","at":"2026-03-06 07:00:00"}\n{"code":"1042","direction":"sideways","at":"2026-03-06 15:00:00"}\n',
    );
    const bad = await runCli(['punch', '--import', file, ...common]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/CLI_IMPORT_BAD_LINE: .*line 2: "direction" must be "in" or "out"/);
    expect((await queueStatus()).pending).toBe(2);
  });

  it('refuses an import that does not fit under the cap before recording any of it; queue status shows the cap and how full it is', async () => {
    const capped = { env: { EDGE_AGENT_OUTBOX__MAX_PENDING: '5' } };
    const file = join(dir, 'too-many.jsonl');
    const lines = (n: number, day: string) =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ code: `C${i}`, direction: 'in', at: `2026-03-${day} 07:00:00`, tz: 60 }));
    writeFileSync(file, `${lines(4, '07').join('\n')}\n`);
    const refused = await runCli(['punch', '--import', file, ...common], capped);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /STORE_OUTBOX_FULL: 4 punches do not fit: the outbox holds 2 undelivered punches, the cap is 5 \(room for 3\); nothing was recorded/,
    );
    expect(refused.stderr).toMatch(/import at most 3 punches/);
    expect((await queueStatus()).pending).toBe(2);

    writeFileSync(file, `${lines(3, '08').join('\n')}\n`);
    const ok = await runCli(['punch', '--import', file, '--json', ...common], capped);
    expect(JSON.parse(ok.stdout)).toMatchObject({ recorded: 3, skipped: 0 });
    const json = await runCli(['queue', 'status', '--json', ...common], capped);
    expect(JSON.parse(json.stdout)).toMatchObject({
      pending: 5,
      dead: 0,
      maxPending: 5,
      undelivered: 5,
      capFullPercent: 100,
      capRoom: 0,
      perSink: { api: { pending: 5, dead: 0 } },
    });
    const text = await runCli(['queue', 'status', ...common], capped);
    expect(text.stdout).toMatch(/cap +5 pending\+dead: 100 % full, room for 0 more +\(nearly full/);
    // The default cap holds a month of a busy gate.
    expect((await queueStatus()) as unknown).toMatchObject({ maxPending: 1_000_000, capRoom: 1_000_000 - 5, capFullPercent: 0 });
  });

  it('an import run again after an interruption records only what is missing, under the same ids', async () => {
    const data = join(dir, 'data-import');
    const args = common.map((a) => (a === join(dir, 'data') ? data : a));
    const file = join(dir, 'big-log.jsonl');
    const lines = Array.from({ length: 2500 }, (_, i) =>
      JSON.stringify({
        code: `P${i % 40}`,
        direction: i % 80 < 40 ? 'in' : 'out',
        at: `2026-02-${String(1 + Math.floor(i / 100)).padStart(2, '0')} ${String(6 + (i % 80 < 40 ? 0 : 9)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
        tz: 60,
      }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const ids = async () =>
      (JSON.parse((await runCli(['queue', 'list', '--json', '--limit', '10000', ...args])).stdout) as Array<{ id: string }>)
        .map((r) => r.id)
        .sort();
    // Too many for the cap: refused before anything is written.
    const cut = await runCli(['punch', '--import', file, '--json', ...args], { env: { EDGE_AGENT_OUTBOX__MAX_PENDING: '1500' } });
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/STORE_OUTBOX_FULL: 2500 punches do not fit: .*nothing was recorded/);
    expect(await ids()).toEqual([]);
    // A named import interrupted after its first chunk of 1000 (as a crash would leave it)...
    const head = join(dir, 'big-log-head.jsonl');
    writeFileSync(head, `${lines.slice(0, 1000).join('\n')}\n`);
    expect(JSON.parse((await runCli(['punch', '--import', head, '--import-id', 'feb-log', '--json', ...args])).stdout)).toMatchObject({
      recorded: 1000,
      skipped: 0,
    });
    const first = await ids();
    expect(first).toHaveLength(1000);
    // ...run again on the whole file: the rest only, and it says how much it skipped.
    const again = await runCli(['punch', '--import', file, '--import-id', 'feb-log', ...args]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /imported 1500 punch\(es\) .*; skipped 1000 already recorded by an earlier run of this import \(feb-log\)/,
    );
    const all = await ids();
    expect(all).toHaveLength(2500);
    expect(all.filter((id) => first.includes(id))).toHaveLength(1000);
    // Once more: nothing new, the same 2500 ids.
    const third = await runCli(['punch', '--import', file, '--import-id', 'feb-log', '--json', ...args]);
    expect(JSON.parse(third.stdout)).toMatchObject({ recorded: 0, skipped: 2500, importId: 'feb-log' });
    expect(await ids()).toEqual(all);
    // Without --import-id the file's content hash names the import: the same file twice records it once.
    const hashed = await runCli(['punch', '--import', head, '--json', ...args]);
    expect(JSON.parse(hashed.stdout)).toMatchObject({
      recorded: 1000,
      skipped: 0,
      importId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const rehashed = await runCli(['punch', '--import', head, ...args]);
    expect(rehashed.stdout).toMatch(
      /imported 0 punch\(es\) .*; skipped 1000 already recorded by an earlier run of this import \(sha256:[0-9a-f]{64}\)/,
    );
    expect(await ids()).toHaveLength(3500);
    // With --import-id, a copy with lines added at its end skips what the named import recorded.
    const named = join(dir, 'named.jsonl');
    writeFileSync(named, `${lines.slice(0, 10).join('\n')}\n`);
    expect(
      JSON.parse((await runCli(['punch', '--import', named, '--import-id', 'paper-2026-02', '--json', ...args])).stdout),
    ).toMatchObject({ recorded: 10, skipped: 0 });
    writeFileSync(named, `${lines.slice(0, 12).join('\n')}\n`);
    expect(
      JSON.parse((await runCli(['punch', '--import', named, '--import-id', 'paper-2026-02', '--json', ...args])).stdout),
    ).toMatchObject({ recorded: 2, skipped: 10, importId: 'paper-2026-02' });
  }, 120_000);
});
