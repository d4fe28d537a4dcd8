/**
 * Destructive commands (queue purge --dead, users remove, keys revoke) ask before they act, or
 * take --yes. Without a terminal to ask on they refuse rather than guess.
 *
 * Tested in test/integration/cli-management.test.ts (users remove, keys revoke and queue purge
 * --dead ask first, refuse without a terminal, take --yes).
 */
import { AgentError } from '../core/errors.js';

/**
 * Resolves true when the person said yes (or gave --yes), false when they said no. Throws
 * CLI_CONFIRM_NEEDED when stdin is not a terminal and --yes was not given.
 */
export async function confirmed(question: string, yes: boolean | undefined, command: string): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY) {
    throw new AgentError(
      'CLI_CONFIRM_NEEDED',
      `${command} deletes what cannot be brought back and asks first, but stdin is not a terminal: nothing was deleted`,
      { command },
      {
        hint: `add --yes to confirm: edge-agent ${command} --yes`,
      },
    );
  }
  const { confirm } = await import('@inquirer/prompts');
  try {
    return await confirm({ message: question, default: false });
  } catch (err) {
    if ((err as Error).name === 'ExitPromptError') return false; // Ctrl-C at the question
    throw err;
  }
}
