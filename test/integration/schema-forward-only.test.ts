/**
 * Migrations only go forward: after a rollback, an older edge-agent meets a database a newer one
 * migrated. Through the real CLI, `queue status` and `run` refuse it with STORE_SCHEMA_TOO_NEW and
 * a hint naming `edge-agent rollback`, and the punches in it are untouched.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'forward-only-'));
const data = join(dir, 'data');
const secretFile = join(dir, 'api-secret');
writeFileSync(secretFile, 'not-used\n', { mode: 0o600 });
const common = ['--data', data, '--terminal', 'gate-1', '--api', 'http://127.0.0.1:9', '--api-key', 'k', '--api-secret-file', secretFile];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function punches(): Promise<number> {
  const db = await SqliteDatabase.open(join(data, 'agent.db'), { readonly: true });
  try {
    return (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM outbox_events'))!.n;
  } finally {
    await db.close();
  }
}

describe('a database migrated by a newer edge-agent', () => {
  it('is refused by queue status and run with a hint, and its punches stay', async () => {
    const p = await runCli(['punch', '--code', '1042', '--in', '--at', '2026-03-02 07:58:00', '--tz', '60', ...common]);
    expect(p.code, p.stderr).toBe(0);
    expect(await punches()).toBe(1);

    // What a later release's migration leaves behind: a version this one does not know.
    const db = await SqliteDatabase.open(join(data, 'agent.db'));
    await db.transaction((d) =>
      d.run(
        "INSERT INTO schema_migrations (component, version, description, applied_at) VALUES ('outbox', 999, 'from the future', '2030-01-01T00:00:00Z')",
      ),
    );
    await db.close();

    const q = await runCli(['queue', 'status', ...common]);
    expect(q.code).toBe(1);
    expect(q.stderr).toContain('STORE_SCHEMA_TOO_NEW');
    expect(q.stderr).toMatch(/outbox schema is at version 999/);
    expect(q.stderr).toContain('edge-agent rollback');

    const r = await runCli(['run', ...common], { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('STORE_SCHEMA_TOO_NEW');
    expect(await punches()).toBe(1);
  }, 90_000);
});
