/**
 * The real CLI: `edge-agent keys create` then `edge-agent serve` in a child process, a token and
 * a call over plain HTTP, clean shutdown on SIGTERM; and the CLI's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { runCli } from '../helpers/cli.js';
import { startServiceProcess, type ChildService } from '../helpers/service.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edge-agent-cli-api-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('edge-agent serve and keys create', () => {
  let svc: ChildService | undefined;
  afterAll(async () => {
    await svc?.stop();
  });

  it('serves on --port 0, answers a plain HTTP client, stores the secret hashed, stops cleanly on SIGTERM', async () => {
    const shifts = join(dir, 'shifts.yaml');
    writeFileSync(shifts, 'defaultShift: EARLY\nshifts:\n  - { name: EARLY, start: "06:00", end: "14:00", breakMinutes: 30 }\n');
    svc = await startServiceProcess({ dbPath: join(dir, 'served.db'), shifts, clientId: 'plant-7' });
    expect(svc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tokenRes = await fetch(`${svc.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('plant-7:').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'password', username: svc.apiKey, password: svc.apiSecret }).toString(),
    });
    const { access_token } = (await tokenRes.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
    await fetch(`${svc.url}/api/attendance/user`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ employeeCode: 'C1', firstName: 'Cli', lastName: 'Ent' }),
    });
    const ev = await fetch(`${svc.url}/api/attendance/event`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify([{ employeeCode: 'C1', inTime: '2024-07-01 05:50:00' }]),
    });
    const body = (await ev.json()) as { returnValue: Array<{ returnValue: { shift: string } }> };
    expect(body.returnValue[0]!.returnValue.shift).toBe('EARLY'); // the default shift of --shifts

    const exit = new Promise<number | null>((resolve) => svc!.child.once('exit', (code) => resolve(code)));
    let out = '';
    svc.child.stdout!.on('data', (d: Buffer) => (out += d));
    svc.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(out).toContain('SIGTERM: stopping');

    const db = await SqliteDatabase.open(svc.dbPath, { readonly: true });
    const keys = await db.all<{ api_key: string; secret_hash: string; role: string }>(
      'SELECT api_key, secret_hash, role FROM server_api_keys ORDER BY role',
    );
    const events = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM server_events');
    await db.close();
    expect(keys.map((k) => k.role)).toEqual(['admin', 'admin-audit']);
    for (const k of keys) {
      expect(k.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(k.secret_hash).not.toContain(svc.apiSecret);
    }
    expect(events!.n).toBe(1);
  }, 120_000);

  it('refuses a bad role, a missing --db, a broken shifts file', async () => {
    const role = await runCli(['keys', 'create', '--db', join(dir, 'x.db'), '--role', 'root']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('CLI_USAGE');
    const noDb = await runCli(['serve', '--port', '0']);
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain('--db');
    const badShifts = join(dir, 'bad-shifts.yaml');
    writeFileSync(badShifts, 'defaultShift: NONE\nshifts: []\n');
    const shifts = await runCli(['serve', '--port', '0', '--db', join(dir, 'y.db'), '--shifts', badShifts]);
    expect(shifts.code).toBe(1);
    expect(shifts.stderr).toContain('SERVER_SHIFTS_INVALID');
  }, 120_000);
});
