/**
 * The layers of the architecture, enforced by `npm test`: dependency-cruiser with the rules of
 * .dependency-cruiser.cjs (imports point down only, no cycles, drivers/ knows only src/core/)
 * over the folders `npm run lint:deps` names, and not one violation.
 *
 * Tests: .dependency-cruiser.cjs over src/ and drivers/ (the import rules of docs/architecture.md).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { ROOT } from '../helpers/cli.js';

/** The folders of `npm run lint:deps` (`depcruise src drivers ...`): one list for both. */
function lintDepsTargets(): string[] {
  const script = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts['lint:deps']!;
  const words = script.split(/\s+/);
  const targets: string[] = [];
  for (const w of words.slice(words.indexOf('depcruise') + 1)) {
    if (w.startsWith('-')) break;
    targets.push(w);
  }
  return targets;
}

function describeViolation(v: IViolation): string {
  const path = v.cycle?.length ? [v.from, ...v.cycle.map((c) => c.name)].join(' → ') : `${v.from} → ${v.to}`;
  return `${v.rule.name}: ${path}`;
}

describe('the dependency rules (npm run lint:deps)', () => {
  it('hold over src/ and drivers/: no upward import, no cycle', async () => {
    const targets = lintDepsTargets();
    expect(targets).toEqual(expect.arrayContaining(['src', 'drivers']));
    const options = await extractDepcruiseOptions(`${ROOT}.dependency-cruiser.cjs`);
    const tsConfig = extractTSConfig(`${ROOT}tsconfig.json`);
    // The rules' paths, and the config's tsconfig, are relative to the repository.
    const previous = process.cwd();
    process.chdir(ROOT);
    let output: string | ICruiseResult;
    try {
      ({ output } = await cruise(targets, { ...options, validate: true }, {}, { tsConfig }));
    } finally {
      process.chdir(previous);
    }
    const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
    // Something was cruised, and the rules were loaded: an empty run would pass anything.
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.ruleSetUsed?.forbidden?.map((r) => r.name)).toContain('no-circular');
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
  }, 120_000);
});
