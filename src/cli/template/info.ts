import { readFileSync } from 'node:fs';
import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { describeTemplate, readTemplate } from '../../biometrics/template-file.js';

const usage = `usage: edge-agent template info FILE [--json]
  Says what a template file holds (format, version, counts, quality), never the biometric data.
  Formats: iris code v1 (EAIR…), ISO/IEC 19794-2 and ANSI INCITS 378 minutiae records (FMR…).`;

/** Reads a template file, turning file-system errors into AgentErrors. */
export function readTemplateFile(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new AgentError('CLI_FILE_UNREADABLE', `cannot read ${file}: ${e.code ?? e.message}`, { file }, { hint: 'check the path and the permissions' });
  }
}

const command: Command = {
  summary: 'what a template file holds (format, version, counts, quality)',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } }, usage);
    if (positionals.length !== 1) throw new AgentError('CLI_USAGE', 'template info takes one FILE', {}, { hint: usage });
    const file = positionals[0]!;
    const info = { file, ...describeTemplate(readTemplate(readTemplateFile(file), file)) };
    if (values.json) printJson(info);
    else process.stdout.write(`${Object.entries(info).map(([k, v]) => `${k.padEnd(14)} ${v === null ? '-' : String(v)}`).join('\n')}\n`);
    return 0;
  },
};
export default command;
