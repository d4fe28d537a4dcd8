import type { Command } from 'commander';
import { action, defineCommand } from '../command.js';

export default function register(program: Command): Command {
  return action(defineCommand(program, { name: 'version', summary: 'print the version', audience: 'everyone' }), async () => {
    const { VERSION } = await import('../../core/version.js');
    process.stdout.write(`${VERSION}\n`);
    return 0;
  });
}
