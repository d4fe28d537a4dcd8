import type { Command } from '../command.js';
import { VERSION } from '../../core/version.js';

const command: Command = {
  summary: 'print the version',
  usage: 'usage: edge-agent version',
  async run() {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  },
};
export default command;
