import { describe, expect, it } from 'vitest';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { spawnCli, waitForLine } from '../helpers/cli.js';

// What `npm start` runs: the real daemon on its embedded default.
describe('the embedded default (npm start)', () => {
  it('says what is simulated and where each part listens, gets punches into the embedded service, and stops cleanly on Ctrl-C', async () => {
    const data = mkdtempSync(join(tmpdir(), 'embedded-'));
    const child = spawnCli(['run', '--embedded', '--data', data], { env: { EDGE_AGENT_LOG_LEVEL: 'error' } });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitForLine(child, /delivered: \d+ punch\(es\) to api/, 100_000, 'stdout');
      const lines = out.split('\n');
      expect(lines[0]).toContain('embedded default');
      expect(out).toMatch(/simulated: +an R30x fingerprint module and an iris camera/);
      expect(out).toMatch(/attendance service: http:\/\/127\.0\.0\.1:\d+/);
      expect(out).toMatch(/MQTT broker: +mqtt:\/\/127\.0\.0\.1:\d+/);
      expect(out).toMatch(/punch: E10\d\d \([^)]+\) checked (in|out)/);
      expect(statSync(join(data, 'secrets.yaml')).mode & 0o777).toBe(0o600);

      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGINT');
      expect(await exited).toBe(0);

      // The service's own database holds the punches the agent delivered.
      const db = await SqliteDatabase.open(join(data, 'service.db'), { readonly: true });
      try {
        const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
        const eventTable = tables.map((t) => t.name).find((n) => /event/i.test(n));
        expect(eventTable).toBeTruthy();
        const row = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${eventTable}`);
        expect(row!.n).toBeGreaterThan(0);
      } finally {
        await db.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 150_000);
});
