/**
 * The shape of one `edge-agent` command. Each command lives in `src/cli/commands/<name>.ts` and
 * default-exports a `Command`; `main.ts` finds it by file name, so adding a command touches no
 * shared file. Subcommands (`keys create`, `queue status`) are parsed inside the command.
 */
export interface Command {
  /** One line for `edge-agent help`. */
  summary: string;
  /** Full usage text, printed by `edge-agent help <name>` and on a usage error. */
  usage: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(argv: string[]): Promise<number>;
}
