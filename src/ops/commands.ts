/**
 * Request/response over MQTT. A request on `<base>/req/<command>` carries a JSON object with a
 * `transaction` id and the command's arguments; the answer goes to `<base>/res/<command>` echoing
 * the transaction with `status: "ok"` and a `result`, or `status: "error"` and an `error`
 * `{code, message, hint}`. Unknown commands and malformed payloads get an error answer; a handler
 * that throws gets an error answer; nothing here ever crashes the agent.
 */
import { AgentError, toAgentError } from '../core/errors.js';

export type CommandArgs = Record<string, unknown>;
export type CommandHandler = (args: CommandArgs) => Promise<unknown> | unknown;

export const OPS_COMMANDS = ['ping', 'info', 'queue-status', 'retry-dead', 'sync-templates', 'set-log-level', 'reload-config', 'delete-user', 'restart'] as const;
export type OpsCommand = (typeof OPS_COMMANDS)[number];

export interface CommandResponse {
  transaction: string | null;
  status: 'ok' | 'error';
  command: string;
  result?: unknown;
  error?: { code: string; message: string; hint?: string };
  at: string;
}

/** Parses a request payload; throws OPS_BAD_REQUEST with what was wrong. */
export function parseRequest(payload: Buffer): { transaction: string | null; args: CommandArgs } {
  let value: unknown;
  const text = payload.toString('utf8');
  if (text.trim() === '') return { transaction: null, args: {} };
  try {
    value = JSON.parse(text);
  } catch {
    throw new AgentError('OPS_BAD_REQUEST', 'the request payload is not JSON', {}, { hint: 'send a JSON object such as {"transaction": "abc-1"}' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentError('OPS_BAD_REQUEST', 'the request payload must be a JSON object', {}, { hint: 'send a JSON object such as {"transaction": "abc-1"}' });
  }
  const obj = value as Record<string, unknown>;
  const t = obj.transaction;
  if (t !== undefined && t !== null && typeof t !== 'string' && typeof t !== 'number') {
    throw new AgentError('OPS_BAD_REQUEST', 'transaction must be a string or a number', {}, { hint: 'send {"transaction": "abc-1"}' });
  }
  const { transaction: _t, ...args } = obj;
  return { transaction: t === undefined || t === null ? null : String(t), args };
}

/** Best-effort transaction id from a payload that failed to parse otherwise. */
function salvageTransaction(payload: Buffer): string | null {
  const m = /"transaction"\s*:\s*"?([^",}]+)"?/.exec(payload.toString('utf8'));
  return m ? m[1]! : null;
}

export class CommandRouter {
  readonly #handlers = new Map<string, CommandHandler>();

  register(command: string, handler: CommandHandler): this {
    this.#handlers.set(command, handler);
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
      const handler = this.#handlers.get(command);
      if (!handler) {
        throw new AgentError('OPS_UNKNOWN_COMMAND', `unknown command "${command}"`, { command }, { hint: `known commands: ${this.commands.join(', ')}` });
      }
      const result = await handler(req.args);
      return { transaction, status: 'ok', command, result: result ?? null, at: at() };
    } catch (err) {
      const e = toAgentError(err, 'OPS_COMMAND_FAILED');
      return {
        transaction: transaction ?? salvageTransaction(payload),
        status: 'error',
        command,
        error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
        at: at(),
      };
    }
  }
}
