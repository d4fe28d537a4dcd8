#!/usr/bin/env node
/**
 * `edge-agent <command> [args]`. Commands are the files of `./commands/` (see `command.ts`),
 * declared on commander, which turns their definitions into help and usage errors.
 * Exit codes: 0 success, 1 failure (an AgentError printed with its code and hint), 2 usage error.
 */
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { AUDIENCES, commandFilesIn, registerFolder } from './command.js';
import { AgentError, describeError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { err as printErr } from './output.js';

const COMMANDS = new URL('./commands/', import.meta.url);

/** The command tree: every command declared, or with `only` just that one (see registerFolder). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('edge-agent')
    .usage('<command> [options]')
    .description('The edge agent for biometric attendance terminals.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show the help of a command')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: () => undefined })
    .addHelpText('after', '\n"edge-agent <command> --help" (or "edge-agent help <command>") shows the options of one command.');
  program.helpCommand('help [command]', 'show the help of a command');
  await registerFolder(program, COMMANDS, only);
  // Help lists the groups in the order of their first command: everyone first, then by audience.
  const rank = (c: Command) => Object.values<string>(AUDIENCES).indexOf(c.helpGroup());
  (program.commands as Command[]).sort((a, b) => rank(a) - rank(b));
  return program;
}

/** The name of the command a usage error is about: `queue list`, for its hint. */
function commandPath(argv: string[], program: Command): string {
  const names: string[] = [];
  let cmd: Command | undefined = program;
  for (const a of argv) {
    const next: Command | undefined = cmd?.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!next) break;
    names.push(next.name());
    cmd = next;
  }
  return names.join(' ');
}

export async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  const named = first !== undefined && commandFilesIn(COMMANDS).has(first);
  // --version needs no command at all; help and a mistyped command need them all.
  const program = await buildProgram(named ? first : first === '--version' || first === '-V' ? '' : undefined);
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  process.exitCode = undefined;
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const name = commandPath(argv, program);
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      const message = err.message.replace(/^error: /, '');
      printErr(
        `edge-agent${name ? ` ${name}` : ''}: CLI_USAGE: ${message}\n  hint: run "edge-agent ${name ? `${name} ` : ''}--help" for the options\n`,
      );
      return 2;
    }
    printErr(`edge-agent${name ? ` ${name}` : ''}: ${describeError(err)}\n`);
    return err instanceof AgentError && err.code === 'CLI_USAGE' ? 2 : 1;
  }
}

const invokedDirectly = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly || process.argv[1]?.endsWith('/edge-agent')) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      printErr(`edge-agent: ${describeError(err)}\n`);
      process.exitCode = 1;
    },
  );
}
