/**
 * Request/response over MQTT. A request on `<base>/req/<command>` carries a JSON object with a
 * `transaction` id, the command's arguments and `auth` (the signature, see ops-auth.ts); the
 * answer goes to `<base>/res/<command>` echoing the transaction with `status: "ok"` and a
 * `result`, or `status: "error"` and an `error` `{code, message, hint}`.
 *
 * In this order, and nothing runs before its step passed: the payload is at most
 * `MAX_REQUEST_BYTES` and a JSON object (`OPS_BAD_REQUEST`); the signature is valid
 * (`OPS_UNAUTHENTICATED`); the command is known (`OPS_UNKNOWN_COMMAND`); its arguments pass its
 * schema (`OPS_BAD_ARGUMENT`); then it runs (a throw is an error answer). Nothing here ever
 * crashes the agent.
 */
import { z } from 'zod';
import { AgentError, toAgentError } from '../core/errors.js';
import type { RequestVerifier } from './ops-auth.js';

export type CommandArgs = Record<string, unknown>;
export type CommandHandler<A = CommandArgs> = (args: A) => Promise<unknown> | unknown;

export const OPS_COMMANDS = [
  'ping',
  'info',
  'queue-status',
  'queue-list',
  'retry-dead',
  'sync-templates',
  'set-log-level',
  'reload-config',
  'delete-user',
  'restart',
] as const;
export type OpsCommand = (typeof OPS_COMMANDS)[number];

/** The largest request payload read; a longer one is answered OPS_BAD_REQUEST without parsing it. */
export const MAX_REQUEST_BYTES = 64 * 1024;
export const MAX_TRANSACTION_CHARS = 128;
/** What a command with no arguments accepts. */
export const NO_ARGUMENTS = z.strictObject({});

export interface CommandResponse {
  transaction: string | null;
  status: 'ok' | 'error';
  command: string;
  result?: unknown;
  error?: { code: string; message: string; hint?: string };
  at: string;
}

export interface ParsedRequest {
  transaction: string | null;
  /** The `auth` member as sent (checked by the verifier). */
  auth: unknown;
  args: CommandArgs;
}

const REQUEST_HINT = 'send a JSON object such as {"transaction": "abc-1", "auth": {...}} (edge-agent ops send builds it)';

function badRequest(message: string, context: Record<string, unknown> = {}): AgentError {
  return new AgentError('OPS_BAD_REQUEST', message, context, { hint: REQUEST_HINT });
}

function checkTransaction(t: unknown): string | null {
  if (t === undefined || t === null) return null;
  if (typeof t === 'number' && Number.isFinite(t)) return String(t);
  if (typeof t !== 'string') throw badRequest('transaction must be a string or a number');
  if (t.length > MAX_TRANSACTION_CHARS || /[\p{Cc}\p{Cs}]/u.test(t))
    throw badRequest(`transaction must be at most ${MAX_TRANSACTION_CHARS} printable characters`);
  return t;
}

/** Parses a request payload; throws OPS_BAD_REQUEST with what was wrong. */
export function parseRequest(payload: Buffer): ParsedRequest {
  if (payload.length > MAX_REQUEST_BYTES)
    throw badRequest(`the request is ${payload.length} bytes; at most ${MAX_REQUEST_BYTES} are read`, { bytes: payload.length });
  const text = payload.toString('utf8');
  if (text.trim() === '') return { transaction: null, auth: undefined, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('the request payload is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('the request payload must be a JSON object');
  const { transaction, auth, ...args } = value as Record<string, unknown>;
  return { transaction: checkTransaction(transaction), auth, args };
}

/** Best-effort transaction id from a payload that failed to parse otherwise (read from its head only). */
function salvageTransaction(payload: Buffer): string | null {
  const m = /"transaction"\s*:\s*(?:"([^"\\]{1,128})"|(-?\d{1,20})[,}\s])/.exec(payload.subarray(0, 4096).toString('utf8'));
  const t = m ? (m[1] ?? m[2]!) : null;
  return t !== null && !/[\p{Cc}\p{Cs}]/u.test(t) ? t : null;
}

/** A command name as echoed in answers and messages (never a whole 70,000-character topic level). */
function shown(command: string): string {
  return command.length > 64 ? `${command.slice(0, 64)}…` : command;
}

/** Zod issues in one line. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? `"${i.path.join('.')}"` : 'arguments'}: ${i.message}`)
    .join('; ');
}

interface Registered {
  handler: CommandHandler<never>;
  args: z.ZodType;
  hint: string;
}

export class CommandRouter {
  readonly #handlers = new Map<string, Registered>();
  readonly #verifier: RequestVerifier;

  constructor(verifier: RequestVerifier) {
    this.#verifier = verifier;
  }

  /** Registers a command; its arguments must pass `args` (no arguments by default), `hint` says how to call it. */
  register<S extends z.ZodType = typeof NO_ARGUMENTS>(
    command: string,
    handler: CommandHandler<z.output<S>>,
    args?: S,
    hint = 'this command takes no arguments',
  ): this {
    this.#handlers.set(command, { handler: handler as CommandHandler<never>, args: args ?? NO_ARGUMENTS, hint });
    return this;
  }

  get commands(): string[] {
    return [...this.#handlers.keys()].sort();
  }

  async handle(command: string, payload: Buffer): Promise<CommandResponse> {
    const at = () => new Date().toISOString();
    let transaction: string | null = null;
    try {
      const req = parseRequest(payload);
      transaction = req.transaction;
      await this.#verifier.verify({ command, transaction, args: req.args, auth: req.auth });
      const entry = this.#handlers.get(command);
      if (!entry) {
        throw new AgentError(
          'OPS_UNKNOWN_COMMAND',
          `unknown command "${shown(command)}"`,
          { command: shown(command) },
          { hint: `known commands: ${this.commands.join(', ')}` },
        );
      }
      const args = entry.args.safeParse(req.args);
      if (!args.success)
        throw new AgentError(
          'OPS_BAD_ARGUMENT',
          `bad arguments for ${command}: ${describeIssues(args.error)}`,
          { command },
          { hint: entry.hint },
        );
      const result = await entry.handler(args.data as never);
      return { transaction, status: 'ok', command, result: result ?? null, at: at() };
    } catch (err) {
      const e = toAgentError(err, 'OPS_COMMAND_FAILED');
      return {
        transaction: transaction ?? salvageTransaction(payload),
        status: 'error',
        command: shown(command),
        error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
        at: at(),
      };
    }
  }
}
