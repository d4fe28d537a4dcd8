/**
 * Format and lint, enforced by `npm test`: Biome's CI check (`npm run lint`, the rules and the
 * formatter of biome.json) over the repository, run through its binary in node_modules (no
 * network), and not one diagnostic: no error, no warning, no info. A second test shows the same
 * command fails on a badly formatted file and on a lint finding, in a temporary copy of the
 * configuration (nothing is written into the repository).
 *
 * Tests: biome.json over the repository (npm run lint).
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const BIOME = `${ROOT}node_modules/@biomejs/biome/bin/biome`;

interface BiomeReport {
  summary: { errors: number; warnings: number; infos: number; changed: number; unchanged: number };
  diagnostics: { severity: string; category: string; message: string; location: { path: string; start: { line: number } } }[];
}

/** The arguments of `npm run lint` (`biome ci ...`), without `biome`: one list for the script and this test. */
function lintArgs(): string[] {
  const script = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts.lint!;
  const words = script.split(/\s+/);
  expect(words.slice(0, 2)).toEqual(['biome', 'ci']);
  return words.slice(1);
}

/** Runs Biome with `args` in `cwd`; its JSON report and exit code. */
function biome(args: string[], cwd: string): Promise<{ code: number; report: BiomeReport; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIOME, ...args, '--reporter=json', '--colors=off', '--max-diagnostics=none'],
      { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        try {
          resolve({ code, report: JSON.parse(stdout) as BiomeReport, stderr });
        } catch {
          reject(new Error(`biome ${args.join(' ')} printed no JSON report (exit ${code})\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const describeDiagnostic = (d: BiomeReport['diagnostics'][number]) =>
  `${d.location.path}:${d.location.start.line + 1} ${d.category} (${d.severity}): ${d.message}`;

describe('format and lint (npm run lint)', () => {
  it('Biome finds nothing to report in the repository: no error, no warning, no info', async () => {
    const { code, report } = await biome(lintArgs(), ROOT);
    // Something was checked: a run over no file would pass anything.
    expect(report.summary.changed + report.summary.unchanged).toBeGreaterThan(400);
    // Fix with `npm run format` (layout) and `npx biome lint --write <file>` (safe fixes), then by hand.
    expect(report.diagnostics.map(describeDiagnostic)).toEqual([]);
    expect(report.summary).toMatchObject({ errors: 0, warnings: 0, infos: 0 });
    expect(code).toBe(0);
  }, 120_000);

  it('fails on a badly formatted file, a lint error and a lint warning (a temporary copy of biome.json)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-'));
    copyFileSync(`${ROOT}biome.json`, join(dir, 'biome.json'));
    mkdirSync(join(dir, 'src'));
    // No git repository here: the copy checks every file its `files.includes` names.
    const args = [...lintArgs(), '--vcs-enabled=false'];

    writeFileSync(
      join(dir, 'src', 'clean.ts'),
      'export function first(a: { b: number } | null): number | undefined {\n  return a?.b;\n}\n',
    );
    const clean = await biome(args, dir);
    expect(clean.report.diagnostics.map(describeDiagnostic)).toEqual([]);
    expect(clean.report.summary.unchanged).toBeGreaterThan(0);
    expect(clean.code).toBe(0);

    writeFileSync(join(dir, 'src', 'layout.ts'), 'export const answer   = 42\n');
    writeFileSync(
      join(dir, 'src', 'assign.ts'),
      'let x = 0;\nexport function f(y: number): number {\n  if ((x = y)) return x;\n  return 0;\n}\n',
    );
    writeFileSync(
      join(dir, 'src', 'chain.ts'),
      'export function g(a: { b: number } | null): number | null | undefined {\n  return a && a.b;\n}\n',
    );
    const bad = await biome(args, dir);
    const found = bad.report.diagnostics.map((d) => `${d.location.path} ${d.category} ${d.severity}`).sort();
    expect(found).toEqual([
      'src/assign.ts lint/suspicious/noAssignInExpressions error',
      'src/chain.ts lint/complexity/useOptionalChain warning',
      'src/layout.ts format error',
    ]);
    expect(bad.code).not.toBe(0);

    // A warning alone fails the run too.
    writeFileSync(join(dir, 'src', 'layout.ts'), 'export const answer = 42;\n');
    writeFileSync(join(dir, 'src', 'assign.ts'), 'export const x = 0;\n');
    const warned = await biome(args, dir);
    expect(warned.report.summary).toMatchObject({ errors: 0, warnings: 1 });
    expect(warned.code).not.toBe(0);
  }, 120_000);
});
