/**
 * Tested in test/integration/template-cli.test.ts (what a template holds, and nothing of the code
 * itself).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { action, defineCommand, printJson, withJson } from '../command.js';
import { AgentError } from '../../core/errors.js';

/** Reads a template file, turning file-system errors into AgentErrors. */
export function readTemplateFile(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new AgentError(
      'CLI_FILE_UNREADABLE',
      `cannot read ${file}: ${e.code ?? e.message}`,
      { file },
      { hint: 'check the path and the permissions' },
    );
  }
}

export default function register(template: Command): Command {
  const cmd = defineCommand(template, {
    name: 'info',
    summary: 'what a template file holds (format, version, counts, quality)',
    details: `Says what a template file holds (format, version, counts, quality), never the biometric data.
Formats: iris code v1 (EAIR…), ISO/IEC 19794-2 and ANSI INCITS 378 minutiae records (FMR…).`,
  }).argument('<FILE>', 'the template file');
  withJson(cmd);
  return action<{ json?: boolean }>(cmd, async (values, [file]) => {
    const { describeTemplate, readTemplate } = await import('../../biometrics/template-file.js');
    const info = { file: file!, ...describeTemplate(readTemplate(readTemplateFile(file!), file!)) };
    if (values.json) printJson(info);
    else
      process.stdout.write(
        `${Object.entries(info)
          .map(([k, v]) => `${k.padEnd(14)} ${v === null ? '-' : String(v)}`)
          .join('\n')}\n`,
      );
    return 0;
  });
}
