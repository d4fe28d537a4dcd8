/**
 * The shape of an `edge-agent` command, on commander: a file in `src/cli/commands/` default-
 * exports a `register(program)` that declares the command, its options (each with its help line),
 * its arguments and its action. Help, usage errors (`CLI_USAGE`, exit 2) and `--json` come from
 * those declarations; `main.ts` finds the files by name, so adding a command touches no shared
 * file. A command whose verbs are owned by different features (`template info|compare|extract`)
 * keeps one file per verb in a folder of its own and registers them with `registerFolder`.
 *
 * Command files keep their top-level imports light (types, option tables): what a command needs
 * to do its work is imported inside its action, so `edge-agent help` and light commands do not
 * load native modules or onnxruntime.
 *
 * Tested in test/unit/cli/main.test.ts (every command's help lists exactly the flags it takes,
 * grouped by audience; an unknown flag is a usage error, exit 2) and
 * test/unit/cli/light-imports.test.ts (help loads no native module).
 */
import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Command as Commander, Option } from 'commander';
import { AgentError } from '../core/errors.js';
import { jsonLine } from './output.js';

/** The groups of `edge-agent help`, by who uses the commands. */
export const AUDIENCES = {
  everyone: 'For everyone:',
  technician: 'For field technicians:',
  operations: 'For central operations:',
  integrators: 'For integrators:',
  site: 'For a site running the attendance service:',
} as const;
export type Audience = keyof typeof AUDIENCES;

/** What a command file default-exports: declares its command (or verb) on `parent`. */
export type RegisterCommand = (parent: Commander) => Commander | Promise<Commander>;

/**
 * Registers every command file of the folder `dir` (`.ts` from the sources, `.js` once built) on
 * `parent`, in name order.
 */
/** The command files of `dir` by name (a .js beside its .ts in a development tree counts once). */
export function commandFilesIn(dir: URL): Map<string, string> {
  const folder = fileURLToPath(dir);
  const files = new Map<string, string>();
  for (const f of readdirSync(folder).sort()) {
    const ext = extname(f);
    if ((ext === '.ts' || ext === '.js') && !f.endsWith('.d.ts') && !files.has(basename(f, ext)))
      files.set(basename(f, ext), `${folder}/${f}`);
  }
  return files;
}

/**
 * Declares on `parent` every command file of `dir`, or with `only` just the one of that name (so
 * `queue status` does not import the other commands and what they import: each costs time to load
 * on a Pi or under emulation).
 */
export async function registerFolder(parent: Commander, dir: URL, only?: string): Promise<void> {
  for (const [name, file] of commandFilesIn(dir)) {
    if (only !== undefined && name !== only) continue;
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (typeof mod.default !== 'function') throw new Error(`${file} does not default-export a register(parent) function`);
    await (mod.default as RegisterCommand)(parent);
  }
}

export interface CommandDef {
  /** The name and its arguments, commander style: `enroll [code]`, `info <file>`. */
  name: string;
  summary: string;
  /** Who uses it: the group it is listed under in `edge-agent help` (subcommands leave it out). */
  audience?: Audience;
  /** More text after the options in `--help`. */
  details?: string;
}

/** Declares a command (or a verb of one) on `parent`. */
export function defineCommand(parent: Commander, def: CommandDef): Commander {
  const cmd = parent.command(def.name).description(def.summary);
  if (def.audience) cmd.helpGroup(AUDIENCES[def.audience]);
  if (def.details) cmd.addHelpText('after', `\n${def.details.replace(/^\n+|\s+$/g, '')}\n`);
  return cmd;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

/** Option values keyed by their long flag (`client-id`, not `clientId`), as the option tables use. */
export function flagValues(cmd: Commander): Values {
  const out: Values = {};
  for (const opt of cmd.options) {
    const name = opt.long?.replace(/^--(no-)?/, '');
    if (!name) continue;
    const v = cmd.getOptionValue(opt.attributeName()) as Values[string];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * The action: `handler` gets the option values (typed by the command as `V`, keyed by long flag),
 * the positional arguments and the command, and resolves to the exit code.
 */
export function action<V extends object = Values>(
  cmd: Commander,
  handler: (values: V, args: string[], cmd: Commander) => Promise<number>,
): Commander {
  return cmd.action(async (...received: unknown[]) => {
    const self = received[received.length - 1] as Commander;
    process.exitCode = await handler(flagValues(self) as V, self.args, self);
  });
}

/**
 * For a command made of verbs (`queue status|list|...`): called without a verb, or with one it
 * does not know, it is a usage error that lists the verbs.
 */
export function withVerbs(cmd: Commander): Commander {
  const path = (c: Commander): string => (c.parent?.parent ? `${path(c.parent)} ${c.name()}` : c.name());
  return cmd
    .usage('<verb> [options]')
    .argument('[verb]')
    .action((given: string | undefined) => {
      const verbs = cmd.commands.map((c) => c.name()).join(', ');
      throw usageError(
        path(cmd),
        given ? `unknown verb "${given}" for ${path(cmd)}; use one of ${verbs}` : `${path(cmd)} needs a verb: ${verbs}`,
        { verb: given ?? null },
      );
    });
}

/** An option that may be given again and again; its value is the list. */
export function repeatable(flags: string, description: string): Option {
  return new Option(flags, description).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
}

/** `--json`: one JSON document on stdout instead of text for a person. */
export function withJson(cmd: Commander, description = 'print the result as JSON on stdout'): Commander {
  return cmd.option('--json', description);
}

/** Parses an integer flag, or throws `CLI_USAGE` naming the flag. */
export function intFlag(name: string, value: unknown, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isInteger(n)) {
    throw new AgentError('CLI_USAGE', `--${name} takes a whole number, got "${String(value)}"`, { flag: name, value });
  }
  return n;
}

/** A usage error of `command`: exit 2, with the hint to read its help. */
export function usageError(command: string, message: string, context: Record<string, unknown> = {}): AgentError {
  return new AgentError('CLI_USAGE', message, context, { hint: `run "edge-agent ${command} --help" for its options` });
}

/**
 * A value `command` needs that neither its flags nor a config gave: a usage error naming the flag
 * (`--mqtt URL`), what it is, and where the command looked (`where`, see config/standalone.ts).
 */
export function missingFlag(command: string, flag: string, what: string, where: string): AgentError {
  return new AgentError(
    'CLI_USAGE',
    `edge-agent ${command} needs ${flag} (${what}); ${where}`,
    { flag: flag.split(' ')[0] },
    { hint: `pass ${flag}, or --config FILE with a config that names it; "edge-agent ${command} --help" lists the options` },
  );
}

/** Prints a value as one line of JSON on stdout (control characters escaped, see output.ts). */
export function printJson(value: unknown): void {
  process.stdout.write(`${jsonLine(value)}\n`);
}
