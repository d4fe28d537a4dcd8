/**
 * Start-up pays only for what a command uses: `--version` loads no native module, `punch` and
 * `queue status` only SQLite's, and nothing short of extraction loads onnxruntime (seconds on a
 * Pi under load, more under emulation). Read from the process's own memory map at exit.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cli-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
async function nativeModulesOf(args: string[]): Promise<string[]> {
  const log = join(dir, `native-${n++}`);
  const r = await runCli(args, {
    env: { NATIVE_MODULES_LOG: log, NODE_OPTIONS: `--import tsx --import ${join(ROOT, 'test/helpers/native-modules.ts')}` },
  });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((p) => basename(p));
}

describe('what each command loads', () => {
  const common = ['--data', join(dir, 'data'), '--terminal', 'gate-1', '--api', 'http://127.0.0.1:9'];

  it('--version loads no native module', async () => {
    expect(await nativeModulesOf(['--version'])).toEqual([]);
  });

  it('punch and queue status load SQLite only', async () => {
    expect(await nativeModulesOf(['punch', '--code', '1042', ...common])).toEqual(['node_sqlite3.node']);
    expect(await nativeModulesOf(['queue', 'status', '--json', ...common])).toEqual(['node_sqlite3.node']);
  });

  it('help does not load onnxruntime', async () => {
    const loaded = await nativeModulesOf(['help']);
    expect(loaded.filter((p) => /onnxruntime/.test(p))).toEqual([]);
  });
});
