/**
 * Command files import their work inside their actions, so `edge-agent help` (which loads every
 * command file to list them) loads no native module: no SQLite, no serial ports, no HID, no
 * onnxruntime. Checked in a child process that reports, on exit, every CommonJS module it loaded
 * (all four packages are CommonJS, also when imported from ESM) and every shared object mapped in.
 *
 * Tests: src/cli/main.ts and src/cli/commands (the rule of src/cli/command.ts: light top-level imports).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../../helpers/cli.js';

const NATIVE = /\/node_modules\/(sqlite3|onnxruntime-node|onnxruntime-common|serialport|@serialport\/[^/]+|node-hid)\//;

const dir = mkdtempSync(join(tmpdir(), 'light-imports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const probe = join(dir, 'loaded-modules.mjs');
writeFileSync(
  probe,
  `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const cjs = Object.keys(require('node:module')._cache);
  const shared = process.report.getReport().sharedObjects;
  writeFileSync(process.env.LOADED_MODULES_OUT, JSON.stringify([...cjs, ...shared]));
});
`,
);

/** The native packages (by name) whose files a child process had loaded when it exited. */
function nativePackages(out: string): string[] {
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as string[];
  expect(loaded.length).toBeGreaterThan(0);
  return [...new Set(loaded.flatMap((p) => NATIVE.exec(p)?.[1] ?? []))].sort();
}

function env(out: string): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(probe).href}`.trim(), LOADED_MODULES_OUT: out };
}

describe('edge-agent help loads no native module', () => {
  it('the probe sees each native package when it is loaded', async () => {
    const out = join(dir, 'control.json');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['--input-type=module', '-e', "for (const m of ['sqlite3', 'onnxruntime-node', 'serialport', 'node-hid']) await import(m);"],
        {
          cwd: ROOT,
          env: { ...process.env, ...env(out) },
          stdio: 'ignore',
        },
      );
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    expect(nativePackages(out)).toEqual(expect.arrayContaining(['node-hid', 'onnxruntime-node', 'serialport', 'sqlite3']));
  });

  it("help and a command's --help load none of sqlite3, onnxruntime-node, serialport, node-hid", async () => {
    for (const args of [['help'], ['template', 'extract', '--help'], ['serve', '--help']]) {
      const out = join(dir, `${args.join('-')}.json`);
      const r = await runCli(args, { env: env(out) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Usage: edge-agent/);
      expect(nativePackages(out), `edge-agent ${args.join(' ')}`).toEqual([]);
    }
  });
});
