/** `edge-agent rollback` through the real CLI on an installation under a prefix. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKSUM_FILE, checksumText, installRelease } from '../../src/setup/releases.js';
import { runCli } from '../helpers/cli.js';

function release(version: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'release-')), version);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'dist/VERSION'), version);
  writeFileSync(join(dir, 'release.json'), JSON.stringify({ name: 'edge-agent', version, arch: 'x64' }));
  writeFileSync(join(dir, CHECKSUM_FILE), checksumText(dir));
  return dir;
}

describe('edge-agent rollback', { timeout: 60_000 }, () => {
  it('goes back to the previous release and forward again, and says when there is none', async () => {
    const root = mkdtempSync(join(tmpdir(), 'root-'));
    installRelease(release('0.9.0'), root, false);
    const none = await runCli(['rollback', '--prefix', root]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('SETUP_NO_PREVIOUS_RELEASE');

    installRelease(release('1.0.0'), root, false);
    const back = await runCli(['rollback', '--prefix', root, '--json']);
    expect(back.code, back.stderr).toBe(0);
    const out = JSON.parse(back.stdout) as { ok: boolean; from: string; to: string; steps: Array<{ action: string; status: string }> };
    expect(out).toMatchObject({ ok: true, from: '1.0.0', to: '0.9.0' });
    // These releases carry no unix-dgram addon: the unit gets the NotifyAccess=all drop-in.
    expect(out.steps.map((s) => [s.action, s.status])).toEqual([
      ['switch release', 'done'],
      ['write NotifyAccess drop-in', 'done'],
      ['restart the service', 'skipped'],
    ]);
    expect(readFileSync(join(root, 'etc/systemd/system/edge-agent.service.d/notify-access.conf'), 'utf8')).toContain('NotifyAccess=all');
    expect(readFileSync(join(root, 'opt/edge-agent/current/dist/VERSION'), 'utf8')).toBe('0.9.0');

    const forward = await runCli(['rollback', '--prefix', root]);
    expect(forward.code).toBe(0);
    expect(forward.stdout).toContain('edge-agent 1.0.0 is current; "edge-agent rollback" again returns to 0.9.0');
    expect(readFileSync(join(root, 'opt/edge-agent/current/dist/VERSION'), 'utf8')).toBe('1.0.0');
  });
});
