/**
 * How a command's own logging is set from its flags and for whom it prints:
 *
 * - `--log-level` and `--log-format` mean exactly what `EDGE_AGENT_LOG_LEVEL` and
 *   `EDGE_AGENT_LOG_FORMAT` mean, for every command that takes them: they are applied before the
 *   command runs (so `punch --log-level silent` prints no "clock trusted" line), and set the
 *   variables so the parts the command starts (a daemon, its supervisor) read the same.
 * - An interactive command (`enroll`, `identify`, `provision`) talks to a person: the agent parts
 *   it runs in this process log warnings and errors only, as readable lines rather than JSON,
 *   unless a flag or the environment asks for more. The daemon's own logs go to its journal.
 *
 * Tested in test/integration/cli-output.test.ts (--log-level over EDGE_AGENT_LOG_LEVEL, a wrong
 * level refused).
 */
import { usageError } from './command.js';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Applies `--log-level` / `--log-format` (checked, as the environment variables would be). */
export async function applyLogFlags(command: string, values: { 'log-level'?: string; 'log-format'?: string }): Promise<void> {
  const level = values['log-level'];
  const format = values['log-format'];
  if (level === undefined && format === undefined) return;
  if (level !== undefined && !(LEVELS as readonly string[]).includes(level))
    throw usageError(command, `--log-level takes ${LEVELS.join(', ')}, got "${level}"`, { flag: 'log-level', value: level });
  if (format !== undefined && format !== 'json' && format !== 'pretty')
    throw usageError(command, `--log-format takes json or pretty, got "${format}"`, { flag: 'log-format', value: format });
  if (level !== undefined) process.env.EDGE_AGENT_LOG_LEVEL = level;
  if (format !== undefined) process.env.EDGE_AGENT_LOG_FORMAT = format;
  const { configureLogging } = await import('../core/logger.js');
  configureLogging({
    ...(level !== undefined ? { level: level as (typeof LEVELS)[number] } : {}),
    ...(format !== undefined ? { format: format as 'json' | 'pretty' } : {}),
  });
}

/** For a person at the command: warnings and errors only, one readable line each, unless asked otherwise. */
export async function logForPeople(): Promise<void> {
  const { configureLogging } = await import('../core/logger.js');
  configureLogging({
    ...(process.env.EDGE_AGENT_LOG_LEVEL ? {} : { level: 'warn' }),
    ...(process.env.EDGE_AGENT_LOG_FORMAT ? {} : { format: 'pretty' }),
  });
}
