import { describe, expect, it } from 'vitest';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/core/sqlite.js';
import { spawnSync } from 'node:child_process';
import { childEnv, ROOT, spawnCli, waitForLine } from '../helpers/cli.js';

// What `npm start` runs: the real daemon on its embedded default.
describe('the embedded default (npm start)', () => {
  it('says what is simulated and where each part listens, gets punches into the embedded service, and stops cleanly on Ctrl-C', async () => {
    const data = mkdtempSync(join(tmpdir(), 'embedded-'));
    const child = spawnCli(['run', '--embedded', '--data', data], { env: { EDGE_AGENT_LOG_LEVEL: 'warn' } });
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
      expect(out).toContain('enrolling the synthetic employees through the simulated scanners (this first start only');

      // The follow-along commands run as printed, here in a checkout: through npm, not a bare edge-agent.
      const follow = lines.filter((l) => /^ {2}(follow along:| {2}once installed:| {18})/.test(l)).map((l) => l.slice(22));
      expect(follow).toEqual([
        `npm run edge-agent -- queue status --config ${join(data, 'embedded-config.yaml')}`,
        expect.stringMatching(/^npm run edge-agent -- fleet --mqtt mqtt:\/\/127\.0\.0\.1:\d+$/),
        `npm run edge-agent -- ops send --config ${join(data, 'embedded-config.yaml')} ping`,
        `edge-agent queue status --config ${join(data, 'embedded-config.yaml')}`,
        expect.stringMatching(/^edge-agent fleet --mqtt mqtt:\/\/127\.0\.0\.1:\d+$/),
        `edge-agent ops send --config ${join(data, 'embedded-config.yaml')} ping`,
      ]);
      // The signed ping is answered by the running agent (the key is the demo's secrets file).
      const pinged = spawnSync('sh', ['-c', follow[2]!], { cwd: ROOT, encoding: 'utf8', env: childEnv(), timeout: 60_000 });
      expect(pinged.status, pinged.stderr + pinged.stdout).toBe(0);
      const printed = spawnSync('sh', ['-c', follow[0]!], { cwd: ROOT, encoding: 'utf8', env: childEnv(), timeout: 60_000 });
      expect(printed.status, printed.stderr).toBe(0);
      expect(printed.stdout).toMatch(/^pending +\d+/m);

      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      // A clean Ctrl-C: nothing about losing the broker the agent itself shut down.
      expect(out).not.toMatch(/lost the broker|cannot reach the broker/);

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
      // The second start says what is so: the employees were enrolled before.
      const again = spawnCli(['run', '--embedded', '--data', data], { env: { EDGE_AGENT_LOG_LEVEL: 'error' } });
      try {
        const [line] = await waitForLine(again, /^.*synthetic employee.*$/, 60_000, 'stdout');
        // all of them, or those the first run had time for before its Ctrl-C
        expect(line).toMatch(/were enrolled at an earlier start|an earlier start did not finish/);
        expect(line).not.toContain('first start');
      } finally {
        const done = new Promise((r) => again.once('exit', r));
        again.kill('SIGINT');
        await done;
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 240_000);
});
