/**
 * The layout of the tests (docs/testing.md), enforced by `npm test`, so a module's test can be found
 * from the module's name:
 *
 * - every module under src/ and drivers/ has its test at the mirrored path (`src/a/b.ts` →
 *   `test/unit/a/b.test.ts`, `drivers/a/b.ts` → `test/unit/drivers/a/b.test.ts`), or a
 *   `Tested in <test file>…` line in its header comment naming test files that exist (a unit test
 *   named there reaches the module through its imports);
 * - a mirrored test reaches its module through its imports (a test named after a module tests it);
 * - every `*.test.ts` under test/unit sits at the mirrored path of a module, or its header has a
 *   `Tests: <path>…` line naming what it tests (paths that exist; a module named there is reached);
 * - every other file under test/unit is a shared suite `<subject>.contract.ts` (it declares tests,
 *   and some test runs it) or a helper `<subject>.fixture.ts` (it declares none); test/integration
 *   holds tests only, and test/helpers declares no tests.
 *
 * Tests: test/unit, test/integration and test/helpers (the rules of docs/testing.md)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** Every file under `dir` (relative to the repository), recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(ROOT, rel), { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The comments a file opens with (line and block comments, before the first statement). */
function headerOf(text: string): string {
  let rest = text.replace(/^#!.*\n/, '');
  let header = '';
  for (;;) {
    rest = rest.replace(/^\s+/, '');
    if (rest.startsWith('//')) {
      const end = rest.indexOf('\n');
      header += `${rest.slice(2, end < 0 ? undefined : end)}\n`;
      rest = end < 0 ? '' : rest.slice(end + 1);
    } else if (rest.startsWith('/*')) {
      const end = rest.indexOf('*/');
      if (end < 0) return header;
      header += `${rest.slice(2, end).replace(/^[ \t]*\*[ \t]?/gm, '')}\n`;
      rest = rest.slice(end + 2);
    } else {
      return header;
    }
  }
}

/** The paragraph of `header` that starts with `marker` (up to an empty line or the header's end). */
function paragraphAfter(header: string, marker: RegExp): string | null {
  const lines = header.split('\n');
  const start = lines.findIndex((l) => marker.test(l));
  if (start < 0) return null;
  const paragraph: string[] = [];
  for (const line of lines.slice(start)) {
    if (paragraph.length && line.trim() === '') break;
    paragraph.push(line);
  }
  return paragraph.join(' ').slice(paragraph[0]!.search(marker));
}

/** The test files a module's `Tested in …` line names, or null when it has none. */
function testedIn(moduleText: string): string[] | null {
  const paragraph = paragraphAfter(headerOf(moduleText), /Tested in /);
  return paragraph === null ? null : [...paragraph.matchAll(/test\/(?:unit|integration)\/[\w./-]*?\.test\.ts/g)].map((m) => m[0]);
}

/** The paths a test's `Tests: …` line names, or null when it has none. */
function testsLine(testText: string): string[] | null {
  const paragraph = paragraphAfter(headerOf(testText), /^\s*Tests: /);
  if (paragraph === null) return null;
  return [
    ...paragraph.matchAll(/(?<![\w./-])(?:(?:src|drivers|test|models|docs|systemd)\/(?:[\w./-]*[\w/])?|\.?[\w-]+\.(?:json|cjs))/g),
  ].map((m) => m[0].replace(/\/$/, ''));
}

/** The mirrored test of a module: src/a.ts → test/unit/a.test.ts, drivers/a.ts → test/unit/drivers/a.test.ts. */
function mirroredTest(module: string): string {
  const base = module.replace(/\.ts$/, '');
  return `test/unit/${base.startsWith('src/') ? base.slice('src/'.length) : base}.test.ts`;
}

/** The module a test file would mirror (whether it exists or not). */
function mirroredModule(test: string): string {
  const base = test.slice('test/unit/'.length).replace(/\.test\.ts$/, '.ts');
  return base.startsWith('drivers/') ? base : `src/${base}`;
}

/**
 * The files a TypeScript file loads by a relative path: its imports (`./x.js` → `x.ts`), the
 * worker threads it starts (`startWorker(import.meta.url, './x')`), the folders whose every
 * module it loads (`new URL('./commands/', import.meta.url)`), and the entry points a test
 * helper starts as a child (`${ROOT}src/cli/main.ts`).
 */
function importsOf(file: string): string[] {
  const text = read(file);
  const found: string[] = [];
  const add = (target: string) => {
    if (existsSync(join(ROOT, target))) found.push(target);
  };
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
    add(normalize(join(dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
  }
  for (const m of text.matchAll(/startWorker\(\s*import\.meta\.url,\s*['"](\.\.?\/[^'"]+)['"]/g)) {
    add(`${normalize(join(dirname(file), m[1]!))}.ts`);
  }
  for (const m of text.matchAll(/new URL\(\s*['"](\.\.?\/[^'"]*\/)['"],\s*import\.meta\.url\)/g)) {
    const dir = normalize(join(dirname(file), m[1]!)).replace(/\/$/, '');
    if (!existsSync(join(ROOT, dir))) continue;
    for (const entry of readdirSync(join(ROOT, dir))) if (entry.endsWith('.ts')) add(`${dir}/${entry}`);
  }
  for (const m of text.matchAll(/`\$\{ROOT\}((?:src|drivers)\/[\w./-]+\.ts)`/g)) add(m[1]!);
  return found;
}

const reachCache = new Map<string, Set<string>>();
/** Every file `file` reaches through relative imports, itself included. */
function reaches(file: string): Set<string> {
  const cached = reachCache.get(file);
  if (cached) return cached;
  const seen = new Set<string>([file]);
  const queue = [file];
  while (queue.length) {
    for (const next of importsOf(queue.pop()!)) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  reachCache.set(file, seen);
  return seen;
}

const exists = (path: string) => existsSync(join(ROOT, path));
const isModule = (path: string) => /^(src|drivers)\/.*\.ts$/.test(path) && !path.endsWith('.d.ts');
/** Whether a file declares tests: it imports describe, it or test from vitest (a fixture may import hooks). */
const declaresTests = (file: string) =>
  [...read(file).matchAll(/import\s*\{([^}]*)\}\s*from\s*['"]vitest['"]/g)].some((m) =>
    m[1]!.split(',').some((name) => ['describe', 'it', 'test'].includes(name.trim())),
  );

/**
 * Modules no test exercises, with why: the debt in one place. A module leaves the list when it
 * gets a test (the check fails while it stays listed with a mirrored test or a "Tested in" line).
 */
const UNTESTED: Record<string, string> = {
  'src/cli/commands/version.ts': "nothing runs `edge-agent version` (the --version flag is commander's, checked only for what it loads)",
  'src/core/version.ts': 'no test reads what VERSION says (it is read from package.json)',
};

const MODULES = [...filesUnder('src'), ...filesUnder('drivers')].filter(isModule);
const UNIT = filesUnder('test/unit');
const UNIT_TESTS = UNIT.filter((f) => f.endsWith('.test.ts'));

/** What is wrong with one module's test, or null. */
function moduleProblem(module: string, fileExists = exists): string | null {
  const mirror = mirroredTest(module);
  if (module in UNTESTED) {
    return fileExists(mirror) || testedIn(read(module)) !== null ? `${module}: tested now, remove it from UNTESTED` : null;
  }
  if (fileExists(mirror)) {
    return reaches(mirror).has(module) ? null : `${module}: ${mirror} does not import it (directly, or through what it imports)`;
  }
  const named = testedIn(read(module));
  if (named === null) return `${module}: no ${mirror}, and no "Tested in" line in its header`;
  if (named.length === 0) return `${module}: its "Tested in" line names no test/unit/…test.ts or test/integration/…test.ts file`;
  for (const test of named) {
    if (!fileExists(test)) return `${module}: "Tested in" names ${test}, which does not exist`;
    if (test.startsWith('test/unit/') && !reaches(test).has(module)) {
      return `${module}: "Tested in" names ${test}, which does not import it (directly, or through what it imports)`;
    }
  }
  return null;
}

/** What is wrong with one unit test file's place, or null. */
function testProblem(test: string): string | null {
  if (exists(mirroredModule(test))) return null;
  const named = testsLine(read(test));
  if (named === null) return `${test}: no module at ${mirroredModule(test)}, and no "Tests:" line in its header`;
  if (named.length === 0) return `${test}: its "Tests:" line names no path`;
  for (const path of named) {
    if (!exists(path)) return `${test}: "Tests:" names ${path}, which does not exist`;
    if (isModule(path) && !reaches(test).has(path)) return `${test}: "Tests:" names ${path}, which it does not import`;
  }
  return null;
}

describe('the test layout (docs/testing.md)', () => {
  it('finds the modules and the tests it judges', () => {
    expect(MODULES.length).toBeGreaterThan(250);
    expect(UNIT_TESTS.length).toBeGreaterThan(100);
    // A src/drivers folder would mirror onto the same tests as drivers/.
    expect(exists('src/drivers')).toBe(false);
  });

  it('reads a header: "Tested in" and "Tests:" lines, over more than one line', () => {
    const module =
      '/**\n * The thing.\n *\n * Tested in test/unit/a/b.test.ts and\n * test/integration/c.test.ts (through the CLI).\n */\nexport const x = 1;\n';
    expect(testedIn(module)).toEqual(['test/unit/a/b.test.ts', 'test/integration/c.test.ts']);
    expect(testedIn('// Tested in test/unit/a.test.ts\nimport x from "y";\n// Tested in test/unit/b.test.ts\n')).toEqual([
      'test/unit/a.test.ts',
    ]);
    expect(testedIn('import x from "y";\n/** Tested in test/unit/a.test.ts */\n')).toBeNull();
    expect(testsLine('/**\n * Why.\n *\n * Tests: drivers/r30x/scanner.ts, src/a/b.ts and biome.json (over a pty)\n */\n')).toEqual([
      'drivers/r30x/scanner.ts',
      'src/a/b.ts',
      'biome.json',
    ]);
    expect(mirroredTest('src/core/errors.ts')).toBe('test/unit/core/errors.test.ts');
    expect(mirroredTest('drivers/r30x/parser.ts')).toBe('test/unit/drivers/r30x/parser.test.ts');
  });

  it('fails a module with neither a mirrored test nor a "Tested in" line, or one that points nowhere', () => {
    // src/core/errors.ts without its mirrored test: its header has no "Tested in" line.
    const without = (path: string) => (p: string) => p !== path && exists(p);
    expect(moduleProblem('src/core/errors.ts', without('test/unit/core/errors.test.ts'))).toMatch(/no "Tested in" line/);
    // A "Tested in" line whose file is gone.
    const module = MODULES.find((m) => !exists(mirroredTest(m)) && testedIn(read(m))?.length)!;
    expect(moduleProblem(module, without(testedIn(read(module))![0]!))).toMatch(/does not exist/);
  });

  it('every module under src/ and drivers/ has a mirrored test or a "Tested in" line naming tests that exist', () => {
    expect(MODULES.map((m) => moduleProblem(m)).filter(Boolean)).toEqual([]);
    expect(Object.keys(UNTESTED).filter((m) => !MODULES.includes(m))).toEqual([]);
  });

  it('every test under test/unit sits at its module\'s mirrored path or says in a "Tests:" line what it tests', () => {
    expect(UNIT_TESTS.map(testProblem).filter(Boolean)).toEqual([]);
  });

  it('shared suites are <subject>.contract.ts and run by a test, helpers <subject>.fixture.ts and declare no test', () => {
    const problems: string[] = [];
    const allTests = [...UNIT_TESTS, ...filesUnder('test/integration').filter((f) => f.endsWith('.test.ts'))];
    for (const file of UNIT.filter((f) => !f.endsWith('.test.ts'))) {
      const declares = declaresTests(file);
      if (file.endsWith('.contract.ts')) {
        if (!declares) problems.push(`${file}: a contract declares no test`);
        if (!allTests.some((t) => reaches(t).has(file))) problems.push(`${file}: no test runs this contract`);
      } else if (file.endsWith('.fixture.ts')) {
        if (declares) problems.push(`${file}: a fixture declares tests (a shared suite is a <subject>.contract.ts)`);
      } else {
        problems.push(`${file}: neither <subject>.test.ts, <subject>.contract.ts nor <subject>.fixture.ts`);
      }
      if (!/^[a-z0-9]+(?:-[a-z0-9]+)*\.(?:contract|fixture)\.ts$/.test(file.split('/').pop()!)) {
        problems.push(`${file}: not a kebab-case <subject>.contract.ts or <subject>.fixture.ts`);
      }
    }
    for (const file of filesUnder('test/integration')) {
      if (!file.endsWith('.test.ts')) problems.push(`${file}: test/integration holds tests only (helpers go to test/helpers)`);
    }
    for (const file of filesUnder('test/helpers')) {
      if (declaresTests(file)) problems.push(`${file}: declares tests (a shared suite is a test/unit/…/<subject>.contract.ts)`);
    }
    expect(problems).toEqual([]);
  });

  it('no test file is imported by another file (shared code is a contract or a fixture)', () => {
    const everything = [...filesUnder('test'), ...MODULES].filter((f) => f.endsWith('.ts'));
    const imported = everything.flatMap((f) =>
      importsOf(f)
        .filter((t) => t.endsWith('.test.ts'))
        .map((t) => `${f} → ${t}`),
    );
    expect(imported).toEqual([]);
  });
});
