import type { Command } from '../command.js';
import { dispatchVerb } from '../subcommands.js';

const verbs = new URL('../template/', import.meta.url);

const command: Command = {
  summary: 'biometric templates: info, compare, extract',
  usage: `usage: edge-agent template <verb> [options]
  info FILE                                   what a template file holds
  compare A B [--json]                        score and decision for two template files
  compare --pairs FILE [--json]               one score per tab-separated pair of paths
  extract --modality finger|iris --image FILE --out FILE [--json]`,
  run: (argv) => dispatchVerb('template', verbs, argv),
};
export default command;
