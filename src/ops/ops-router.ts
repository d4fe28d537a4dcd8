/**
 * The terminal's commands over MQTT, bound to what the daemon provides. The handlers validate
 * their arguments and answer with plain JSON; the router turns any failure into an error answer.
 */
import { AgentError } from '../core/errors.js';
import { LOG_LEVELS, setLogLevel, logLevels, type LogLevel } from '../core/logger.js';
import { CommandRouter, type CommandArgs } from './commands.js';

export interface OpsActions {
  terminal: string;
  info(): Promise<Record<string, unknown>>;
  queueStatus(): Promise<unknown>;
  retryDead(ids?: string[]): Promise<number>;
  syncTemplates(): Promise<unknown>;
  reloadConfig(): Promise<unknown>;
  deleteUser(employeeCode: string): Promise<unknown>;
  /** Exits so the service manager starts the agent again; called after the answer went out. */
  restart(): void;
}

function stringArg(args: CommandArgs, name: string, hint: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.trim() === '') {
    throw new AgentError('OPS_BAD_ARGUMENT', `"${name}" must be a non-empty string`, { argument: name, value: v ?? null }, { hint });
  }
  return v;
}

export function createOpsRouter(actions: OpsActions): CommandRouter {
  const started = Date.now();
  return new CommandRouter()
    .register('ping', () => ({ pong: true, terminal: actions.terminal, uptimeSec: Math.round((Date.now() - started) / 1000), at: new Date().toISOString() }))
    .register('info', () => actions.info())
    .register('queue-status', () => actions.queueStatus())
    .register('retry-dead', async (args) => {
      const ids = args.ids;
      if (ids !== undefined && (!Array.isArray(ids) || ids.some((i) => typeof i !== 'string'))) {
        throw new AgentError('OPS_BAD_ARGUMENT', '"ids" must be a list of event ids', { argument: 'ids' }, { hint: 'omit "ids" to retry every dead letter' });
      }
      return { retried: await actions.retryDead(ids as string[] | undefined) };
    })
    .register('sync-templates', () => actions.syncTemplates())
    .register('set-log-level', (args) => {
      const level = stringArg(args, 'level', `one of ${LOG_LEVELS.join(', ')}`);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new AgentError('OPS_BAD_ARGUMENT', `unknown log level "${level}"`, { argument: 'level', value: level }, { hint: `one of ${LOG_LEVELS.join(', ')}` });
      }
      const module = typeof args.module === 'string' && args.module !== '' ? args.module : '*';
      const changed = setLogLevel(module, level as LogLevel);
      return { module, level, changed, levels: logLevels() };
    })
    .register('reload-config', () => actions.reloadConfig())
    .register('delete-user', (args) => actions.deleteUser(stringArg(args, 'employeeCode', 'send {"employeeCode": "E1001"}')))
    .register('restart', () => {
      setTimeout(() => actions.restart(), 300).unref();
      return { restarting: true, inMs: 300 };
    });
}
