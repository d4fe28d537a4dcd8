/**
 * The layer tables of README.md and docs/architecture.md list the folders from the top down:
 * every layer may import only what is listed below it, by the rules of .dependency-cruiser.cjs
 * (the same rules test/unit/architecture.test.ts enforces on the code).
 *
 * Tests: the layer tables of docs/architecture.md and README.md against .dependency-cruiser.cjs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

interface Rule {
  name: string;
  from: { path?: string };
  to: { path?: string | string[]; pathNot?: string | string[] };
}

/** What each folder (`src/store`, `drivers`) may import, from the rules that list what it may import. */
function allowedImports(): Map<string, string[]> {
  const config = createRequire(import.meta.url)(`${ROOT}.dependency-cruiser.cjs`) as { forbidden: Rule[] };
  const allowed = new Map<string, string[]>();
  for (const rule of config.forbidden) {
    const from = /^\^(src\/)?\(?([a-z|-]+)\)?\/$/.exec(rule.from.path ?? '');
    const not = Array.isArray(rule.to.pathNot) ? rule.to.pathNot : [];
    if (!from || rule.to.path !== '^(src|drivers)/' || not.length !== 1) continue;
    const list = /^\^\((.+)\)\/$/.exec(not[0]!)![1]!.split('|');
    for (const f of from[2]!.split('|')) allowed.set(`${from[1] ?? ''}${f}`, list);
  }
  return allowed;
}

/** The folders of each row of the first table of `file` whose rows name `src/...` or `drivers/`. */
function tableRows(file: string): string[][] {
  const rows: string[][] = [];
  for (const line of readFileSync(`${ROOT}${file}`, 'utf8').split('\n')) {
    if (!line.startsWith('|')) {
      if (rows.length) break;
      continue;
    }
    const cells = line.split('|').map((c) => c.trim());
    const folderCell = cells.find((c) => /`(src\/[a-z-]+|drivers)\/`/.test(c));
    if (!folderCell) continue;
    rows.push([...folderCell.matchAll(/`((?:src\/[a-z-]+)|drivers)\/`/g)].map((m) => m[1]!));
  }
  return rows;
}

describe('the layer tables of the docs', () => {
  const allowed = allowedImports();

  it('read the rules: every layer folder has its list', () => {
    for (const f of [
      'src/core',
      'drivers',
      'src/api',
      'src/store',
      'src/terminal',
      'src/daemon',
      'src/ops',
      'src/site-sync',
      'src/synthetic',
    ])
      expect(allowed.get(f), f).toBeDefined();
    expect(allowed.get('src/store')).toEqual(['src/store', 'src/api', 'src/core']);
  });

  for (const file of ['README.md', 'docs/architecture.md']) {
    it(`${file}: each layer may import only layers listed below it, and every layer is listed`, () => {
      const rows = tableRows(file);
      const listed = rows.flat();
      expect(new Set(listed)).toEqual(new Set([...allowed.keys(), 'src/cli']));
      const upward: string[] = [];
      rows.forEach((row, i) => {
        const below = new Set([...row, ...rows.slice(i + 1).flat()]);
        for (const folder of row)
          for (const target of allowed.get(folder) ?? [])
            if (!below.has(target)) upward.push(`${folder} may import ${target}, listed above it`);
      });
      expect(upward).toEqual([]);
    });
  }
});
