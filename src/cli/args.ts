import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AgentError } from '../core/errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `util.parseArgs` with strict checking, turning its errors into `CLI_USAGE` AgentErrors that
 * name the bad flag and point at the usage text.
 */
export function parseCommandArgs<O extends Options>(argv: string[], options: O, usage: string, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new AgentError('CLI_USAGE', (err as Error).message, {}, { hint: usage.trim() });
  }
}

/** Parses an integer flag, or throws `CLI_USAGE` naming the flag. */
export function intFlag(name: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n)) {
    throw new AgentError('CLI_USAGE', `--${name} takes a whole number, got "${value}"`, { flag: name, value });
  }
  return n;
}

/** Prints a value as one line of JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
