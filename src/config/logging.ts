/** The `logging` section of the configuration applied to the logger. */
import { configureLogging, setLogLevel } from '../core/logger.js';
import type { AgentConfig } from './config.js';

/**
 * Applies `logging` from the config: format (json for journald, pretty for a technician), the
 * default level and the per-module levels. `destination: 'stdout'` is for a service (journald);
 * one-shot commands keep the default, stderr, so their stdout stays clean.
 */
export function applyLogging(logging: AgentConfig['logging'], destination: 'stdout' | 'stderr' = 'stderr'): void {
  configureLogging({ level: logging.level, format: logging.format, destination });
  for (const [pattern, level] of Object.entries(logging.modules)) setLogLevel(pattern, level);
}
