/**
 * Every `edge-agent …` command line of README.md and docs/ runs as written. The lines are taken
 * from the documents themselves (code blocks, with `\` continuations joined, and inline code):
 *
 *  - a concrete line of a code block (no `[`, `<`, `|` or `...` of a synopsis) is parsed by the real CLI parser
 *    (the command tree of src/cli/main.ts, every action replaced by a recorder): a known command
 *    and verb, known flags, required flags and arguments present;
 *  - a synopsis (`fleet [--json] [--watch]`, `keys create|list|revoke --db FILE`) and inline code
 *    in prose (which mentions a command and some of its flags: `edge-agent template extract --json`)
 *    name a known command (each alternative) and only flags that command has;
 *  - the lines that can run offline on the machine they are for run for real, in a folder that is
 *    not a checkout, with no configuration and HOME there: the paths they write are moved into it.
 *    The others (a broker, a service, a scanner, root) are run by the tests of their own feature
 *    (cli-standalone, technician-walkthrough, ...).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { runCli } from '../helpers/cli.js';
import { type DocLine, docLines } from '../helpers/doc-commands.js';

/** The command tree with every action replaced by one that records which command ran. */
async function parser(): Promise<{ program: Command; ran: () => Command | null }> {
  const program = await buildProgram();
  let ran: Command | null = null;
  const quiet = (c: Command) => {
    c.configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
    c.exitOverride();
    c.action(function (this: Command) {
      ran = this;
    });
    for (const sub of c.commands) quiet(sub);
  };
  // The root keeps its own behaviour: a word that is no command is an unknown command.
  program.configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
  for (const sub of program.commands) quiet(sub);
  return { program, ran: () => ran };
}

/** Parses `words` as the CLI would: null when it parses to a command that runs, else why not. */
async function parseProblem(words: string[]): Promise<string | null> {
  const { program, ran } = await parser();
  try {
    await program.parseAsync(words, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return null;
      return err.message;
    }
    throw err;
  }
  const cmd = ran();
  if (!cmd || cmd === program) return 'names no command';
  if (cmd.commands.length > 0) return `"${cmd.name()}" needs a verb: ${cmd.commands.map((c) => c.name()).join(', ')}`;
  return null;
}

/** For a synopsis: the command each alternative names, and the flags it uses that the command lacks. */
async function synopsisProblems(words: string[]): Promise<string[]> {
  const { program } = await parser();
  const problems: string[] = [];
  const clean = words.map((w) => w.replace(/^\[+|\]+$|\.\.\.$|…$/g, '')).filter(Boolean);
  // commander's own help command: `edge-agent help [command]`.
  if (clean[0] === 'help')
    return clean[1] && !clean[1].startsWith('<') && !program.commands.some((c) => c.name() === clean[1])
      ? [`"${clean[1]}" is not a command`]
      : [];
  const paths: Command[][] = [[program]];
  // `simulate <family> --link`: a placeholder for the verb stands for any of them.
  let anyOf = false;
  let i = 0;
  for (; i < clean.length; i++) {
    const alternatives = clean[i]!.split('|');
    const next: Command[][] = [];
    for (const path of paths) {
      const at = path.at(-1)!;
      if (/^<.+>$/.test(clean[i]!) && at !== program && at.commands.length > 0) {
        anyOf = true;
        for (const s of at.commands) next.push([...path, s]);
        continue;
      }
      const subs = alternatives.map((a) => at.commands.find((c) => c.name() === a));
      if (subs.every((s) => s !== undefined)) for (const s of subs) next.push([...path, s!]);
    }
    if (next.length === 0) break;
    paths.splice(0, paths.length, ...next);
  }
  if (paths[0]!.length === 1 && !/^[<-]/.test(clean[0] ?? '-')) problems.push(`"${clean[0]}" is not a command`);
  const flags = clean
    .slice(i)
    .flatMap((w) => w.split('|'))
    .filter((w) => /^--?[A-Za-z]/.test(w))
    .map((w) => w.replace(/=.*$/, ''));
  const knownOn = (cmd: Command) => {
    const known = new Set<string | undefined>(['--help', '-h', ...cmd.options.flatMap((o) => [o.long, o.short])]);
    if (cmd === program) known.add('--version').add('-V');
    return known;
  };
  const name = (path: Command[]) =>
    path
      .slice(1)
      .map((c) => c.name())
      .join(' ') || 'edge-agent';
  if (anyOf) {
    for (const f of flags)
      if (!paths.some((p) => knownOn(p.at(-1)!).has(f))) problems.push(`no verb of ${name(paths[0]!.slice(0, -1))} has the option ${f}`);
    return problems;
  }
  for (const path of paths) for (const f of flags) if (!knownOn(path.at(-1)!).has(f)) problems.push(`${name(path)} has no option ${f}`);
  return problems;
}

const LINES = docLines();
const where = (l: DocLine) => `${l.doc}:${l.line}: edge-agent ${l.words.join(' ')}`;

describe("the docs' edge-agent command lines", () => {
  it('finds the command lines of the guides (code blocks, continuations and inline code)', () => {
    const texts = LINES.map((l) => l.text);
    // A block line, a continued block line, a piped one and inline code, from four documents.
    expect(texts).toContain('edge-agent fleet --check');
    expect(LINES.find((l) => l.doc === 'docs/central.md' && l.words[0] === 'ingest' && !l.synopsis)?.words).toContain('--api-secret-file');
    expect(LINES.find((l) => l.words.includes('--hash-password'))?.input).toBe('a long passphrase\n');
    expect(texts).toContain('edge-agent queue release-unsynced');
    expect(LINES.length).toBeGreaterThan(80);
  });

  it('each concrete line parses with the real CLI: known command and verb, known flags, required flags and arguments', async () => {
    const problems: string[] = [];
    for (const l of LINES.filter((x) => !x.synopsis)) {
      const p = await parseProblem(l.words);
      if (p) problems.push(`${where(l)}\n    ${p}`);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('each synopsis names known commands and only their flags', async () => {
    const problems: string[] = [];
    for (const l of LINES.filter((x) => x.synopsis))
      for (const p of await synopsisProblems(l.words)) problems.push(`${where(l)}\n    ${p}`);
    expect(problems).toEqual([]);
  }, 60_000);

  it('the parser check can fail: an unknown flag, a missing required flag, a missing verb, an unknown command', async () => {
    expect(await parseProblem(['keys', 'create', '--db', 'x.db'])).toMatch(/required option '--role <role>' not specified/);
    expect(await parseProblem(['fleet', '--chek'])).toMatch(/unknown option '--chek'/);
    expect(await parseProblem(['queue'])).toMatch(/needs a verb/);
    expect(await parseProblem(['flet'])).toMatch(/unknown command 'flet'/);
    expect(await synopsisProblems(['fleet', '[--json]', '[--wacth]'])).toEqual(['fleet has no option --wacth']);
    expect(await synopsisProblems(['simulate', '<family>', '--lnk'])).toEqual(['no verb of simulate has the option --lnk']);
    expect(await synopsisProblems(['simulate', '--link'])).toEqual(['simulate has no option --link']);
    expect(await synopsisProblems(['keys', 'create|list|revoke', '--db', 'FILE', '--role'])).toEqual([
      'keys list has no option --role',
      'keys revoke has no option --role',
    ]);
  }, 60_000);
});

/**
 * The lines that run offline on the machine they are for. Each gets a fresh folder for HOME and
 * the working folder; absolute paths it writes (`/var/lib/...`) move into it.
 */
const OFFLINE: Array<{ match: (l: DocLine) => boolean; why: string; check: (r: { code: number | null; stdout: string }) => void }> = [
  {
    match: (l) => l.words[0] === 'keys' && l.words[1] === 'create' && !l.text.includes('$'),
    why: 'a new service database on a machine that has none yet',
    check: (r) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/apiKey|"apiKey"/);
    },
  },
  {
    match: (l) => l.words.includes('--hash-password'),
    why: 'a hash of the password on stdin',
    check: (r) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^scrypt\$/);
    },
  },
  {
    match: (l) => l.words[0] === 'help' || (l.words.length === 1 && l.words[0] === '--help'),
    why: 'help',
    check: (r) => {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('edge-agent');
    },
  },
];

describe('the offline lines, run as written on a machine with no terminal configuration', () => {
  const runnable = LINES.filter((l) => !l.synopsis && OFFLINE.some((o) => o.match(l)));
  it('there are such lines (keys create of the technician and the integrator, --hash-password of the console)', () => {
    expect(runnable.filter((l) => l.words[0] === 'keys').map((l) => l.doc)).toEqual(
      expect.arrayContaining(['docs/technician.md', 'docs/integrator.md']),
    );
    expect(runnable.some((l) => l.words.includes('--hash-password'))).toBe(true);
  });
  for (const l of runnable) {
    const o = OFFLINE.find((x) => x.match(l))!;
    it(`${where(l)}  (${o.why})`, async () => {
      const home = mkdtempSync(join(tmpdir(), 'doc-line-'));
      const words = l.words.map((w) => (w.startsWith('/') && !w.startsWith('/dev/') ? join(home, w) : w));
      const r = await runCli(words, {
        cwd: home,
        ...(l.input !== undefined ? { input: l.input } : {}),
        env: {
          HOME: home,
          EDGE_AGENT_CONFIG: '',
          EDGE_AGENT_TEST_INSTALLED_CONFIG: join(home, 'etc/edge-agent/config.yaml'),
          EDGE_AGENT_TEST_DEMO_CONFIG: '',
        },
      });
      const out = `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      try {
        o.check(r);
      } catch (err) {
        throw new Error(`${where(l)} did not run as written:\n${out}\n${(err as Error).message}`);
      }
    }, 60_000);
  }
});
