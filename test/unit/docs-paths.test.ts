/**
 * Every path of the repository's sources, tests and shipped files (`src/...`, `drivers/...`,
 * `test/...`, `systemd/...`, `models/...`) that README.md and docs/*.md name exists: a file or
 * folder moved or renamed fails here until the docs follow. Templates (`drivers/xyz/`,
 * `src/core/error-codes/<layer>.ts`) are not paths and are left out.
 *
 * Tests: the paths named in docs/ and README.md (that each exists).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const DOCS = [
  'README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The source paths a text names, as written (a link's leading `../` dropped). */
function sourcePaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:\.\.\/)?((?:src|drivers|test|systemd|models)\/[A-Za-z0-9_.<>*…/-]*)/g)) {
    const before = text[m.index - 1] ?? ' ';
    if (/[\w./-]/.test(before)) continue; // part of a longer path: dist/src/..., /opt/...
    const path = m[1]!.replace(/[.]+$/, '');
    if (/[<>*…]|\/xyz\/|\.\.\.?$/.test(path)) continue;
    out.add(path);
  }
  return [...out];
}

describe('the paths the docs name', () => {
  it('are found in a text as written, and templates are left out', () => {
    expect(
      sourcePaths(
        'see `src/core/errors.ts`, [x](../src/cli/main.ts). Then src/store/, drivers/r30x/driver.ts and test/unit/core/; not dist/src/cli/main.js, drivers/xyz/driver.ts or src/core/error-codes/<layer>.ts',
      ),
    ).toEqual(['src/core/errors.ts', 'src/cli/main.ts', 'src/store/', 'drivers/r30x/driver.ts', 'test/unit/core/']);
  });

  for (const doc of DOCS) {
    it(`${doc}: every path of the repository it names exists`, () => {
      const missing = sourcePaths(readFileSync(`${ROOT}${doc}`, 'utf8')).filter((p) => !existsSync(`${ROOT}${p}`));
      expect(missing).toEqual([]);
    });
  }
});
