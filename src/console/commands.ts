/**
 * Commands from the page (`POST /api/command`): a strict JSON body naming the terminal, one of
 * CONSOLE_COMMANDS and its arguments (checked with the ops router's own schemas), signed with the
 * console's ops key and sent over MQTT (src/ops/ops-client.ts). At most 8 wait for answers at
 * once. An answer that does not come is an `error` result, not an HTTP error: the page shows it.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { type CommandResponse, NO_ARGUMENTS, type OpsCommand } from '../ops/commands.js';
import { sendCommand } from '../ops/ops-client.js';
import { OPS_ARGUMENTS } from '../ops/ops-router.js';
import type { ConsoleContext } from './console-context.js';
import { fail, readJson } from './web.js';

const log = logger('console');

/**
 * The commands the page may send: an allow-list, on purpose not derived from OPS_COMMANDS (a new
 * ops command is not sent from a browser until it is added here); delete-user and reload-config
 * stay with edge-agent ops send.
 */
export const CONSOLE_COMMANDS = [
  'ping',
  'info',
  'queue-status',
  'queue-list',
  'retry-dead',
  'sync-templates',
  'set-log-level',
  'restart',
] as const satisfies readonly OpsCommand[];
export type ConsoleCommand = (typeof CONSOLE_COMMANDS)[number];

export const MAX_COMMANDS_IN_FLIGHT = 8;
const MAX_BODY_BYTES = 16 * 1024;

const CommandBody = z.strictObject({
  site: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  terminal: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  command: z.enum(CONSOLE_COMMANDS),
  args: z.record(z.string(), z.unknown()).optional(),
});

/** What zod found wrong, in one line (the first three issues). */
const issues = (error: z.ZodError, whole: string) =>
  error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || whole}: ${i.message}`)
    .join('; ');

export class PageCommands {
  readonly #ctx: ConsoleContext;
  #inFlight = 0;

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
  }

  /** Runs the command a request carries; its failures before sending are the console's HTTP errors. */
  async run(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const { options: o, commands, fleet, health } = this.#ctx;
    if (!commands.enabled || !o.signer) throw fail(403, 'CONSOLE_COMMANDS_OFF', `commands are off: ${commands.reason}`);
    const body = await readJson(req, MAX_BODY_BYTES, { type: /^application\/json\b/, message: 'send the command as application/json' });
    const parsed = CommandBody.safeParse(body);
    if (!parsed.success) throw fail(400, 'CONSOLE_BAD_REQUEST', `not a command: ${issues(parsed.error, 'body')}`);
    const { site, terminal, command } = parsed.data;
    const schema = (OPS_ARGUMENTS as Record<string, z.ZodType>)[command] ?? NO_ARGUMENTS;
    const args = schema.safeParse(parsed.data.args ?? {});
    if (!args.success) throw fail(400, 'CONSOLE_BAD_REQUEST', `bad arguments for ${command}: ${issues(args.error, 'arguments')}`);
    if (!fleet.get(`${site}/${terminal}`))
      throw fail(404, 'CONSOLE_NOT_FOUND', `no terminal ${site}/${terminal} has reported under ${o.prefix}`);
    if (this.#inFlight >= MAX_COMMANDS_IN_FLIGHT)
      throw fail(429, 'CONSOLE_BAD_REQUEST', `${MAX_COMMANDS_IN_FLIGHT} commands are already waiting for answers: wait for them`);
    this.#inFlight++;
    health.commandsSent++;
    const from = req.socket.remoteAddress ?? '?';
    try {
      const { reconnectPeriod: _r, clientId: _c, ...access } = o.mqttOptions ?? {};
      const response: CommandResponse = await sendCommand({
        url: o.url,
        mqttOptions: access,
        base: { prefix: o.prefix, site, terminal },
        command,
        args: args.data as Record<string, unknown>,
        key: o.signer.key,
        kid: o.signer.kid,
        timeoutMs: o.commandTimeoutMs ?? 10_000,
      });
      log.info(
        { site, terminal, command, transaction: response.transaction, status: response.status, from },
        'command sent from the console',
      );
      return { status: 200, body: response };
    } catch (err) {
      const e = toAgentError(err, 'OPS_COMMAND_FAILED');
      log.warn({ site, terminal, command, code: e.code, from }, 'command from the console got no answer');
      return {
        status: 200,
        body: {
          transaction: null,
          status: 'error',
          command,
          error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
          at: new Date().toISOString(),
        },
      };
    } finally {
      this.#inFlight--;
    }
  }
}
