/**
 * The terminal's commands over MQTT, bound to what the daemon provides. Each command declares
 * its arguments as a schema (bounded: lengths, counts, the employee-code rule); the router
 * authenticates, checks them and turns any failure into an error answer.
 */
import { z } from 'zod';
import { employeeCodeSchema } from '../api/employee-code.js';
import { LOG_LEVELS, setLogLevel, logLevels, type LogLevel } from '../core/logger.js';
import { CommandRouter } from './commands.js';
import type { RequestVerifier } from './ops-auth.js';

export interface OpsActions {
  terminal: string;
  info(): Promise<Record<string, unknown>>;
  queueStatus(): Promise<unknown>;
  /** The dead letters (or pending punches), oldest first, with each upstream's last error. */
  queueList(options: { dead: boolean; limit: number }): Promise<unknown[]>;
  retryDead(ids?: string[]): Promise<number>;
  syncTemplates(): Promise<unknown>;
  reloadConfig(): Promise<unknown>;
  deleteUser(employeeCode: string): Promise<unknown>;
  /** Exits so the service manager starts the agent again; called after the answer went out. */
  restart(): void;
}

/** The arguments of each command that takes any (the others take none). */
export const OPS_ARGUMENTS = {
  'queue-list': z.strictObject({ dead: z.boolean().optional(), limit: z.number().int().min(1).max(200).optional() }),
  'retry-dead': z.strictObject({ ids: z.array(z.string().min(1).max(64)).max(10_000).optional() }),
  'set-log-level': z.strictObject({
    level: z.enum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
    module: z
      .string()
      .regex(/^[A-Za-z0-9:*._-]{1,128}$/, 'a module name or pattern such as upload:*')
      .optional(),
  }),
  'delete-user': z.strictObject({ employeeCode: employeeCodeSchema }),
};

export function createOpsRouter(actions: OpsActions, verifier: RequestVerifier): CommandRouter {
  const started = Date.now();
  return new CommandRouter(verifier)
    .register('ping', () => ({
      pong: true,
      terminal: actions.terminal,
      uptimeSec: Math.round((Date.now() - started) / 1000),
      at: new Date().toISOString(),
    }))
    .register('info', () => actions.info())
    .register('queue-status', () => actions.queueStatus())
    .register(
      'queue-list',
      async (args) => {
        const dead = args.dead ?? true;
        const limit = args.limit ?? 50;
        const events = await actions.queueList({ dead, limit });
        return { dead, limit, count: events.length, events };
      },
      OPS_ARGUMENTS['queue-list'],
      'send {"dead": true} for the dead letters (the default) or false for pending punches, and "limit" 1 to 200 (default 50)',
    )
    .register(
      'retry-dead',
      async (args) => ({ retried: await actions.retryDead(args.ids) }),
      OPS_ARGUMENTS['retry-dead'],
      'omit "ids" to retry every dead letter, or send {"ids": ["<event id>", ...]}',
    )
    .register('sync-templates', () => actions.syncTemplates())
    .register(
      'set-log-level',
      (args) => {
        const module = args.module ?? '*';
        const changed = setLogLevel(module, args.level);
        return { module, level: args.level, changed, levels: logLevels() };
      },
      OPS_ARGUMENTS['set-log-level'],
      `send {"level": one of ${LOG_LEVELS.join(', ')}, "module": optional pattern such as "upload:*"}`,
    )
    .register('reload-config', () => actions.reloadConfig())
    .register(
      'delete-user',
      (args) => actions.deleteUser(args.employeeCode),
      OPS_ARGUMENTS['delete-user'],
      'send {"employeeCode": "E1001"}',
    )
    .register('restart', () => {
      setTimeout(() => actions.restart(), 300).unref();
      return { restarting: true, inMs: 300 };
    });
}
