/**
 * Commands with verbs whose verbs are owned by different features (`template info|compare|extract`)
 * keep one file per verb in a folder, found by file name like the commands themselves. Each verb
 * file default-exports a `Command`.
 */
import { readdirSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.js';
import { AgentError } from '../core/errors.js';

function verbFiles(dirUrl: URL): Map<string, string> {
  const dir = fileURLToPath(dirUrl);
  const files = new Map<string, string>();
  for (const f of readdirSync(dir)) {
    const ext = extname(f);
    if ((ext === '.ts' || ext === '.js') && !f.endsWith('.d.ts')) files.set(basename(f, ext), `${dir}/${f}`);
  }
  return files;
}

/** The usage text listing every verb of a folder. */
export async function verbsUsage(command: string, dirUrl: URL): Promise<string> {
  const lines = [`usage: edge-agent ${command} <verb> [options]`, '', 'verbs:'];
  for (const [name, file] of [...verbFiles(dirUrl)].sort(([a], [b]) => a.localeCompare(b))) {
    const verb = ((await import(pathToFileURL(file).href)) as { default: Command }).default;
    lines.push(`  ${name.padEnd(12)} ${verb.summary}`);
  }
  return lines.join('\n');
}

/** Runs `argv[0]` as a verb from the folder `dirUrl`. */
export async function dispatchVerb(command: string, dirUrl: URL, argv: string[]): Promise<number> {
  const [verbName, ...rest] = argv;
  const files = verbFiles(dirUrl);
  const file = verbName ? files.get(verbName) : undefined;
  if (!file) {
    throw new AgentError('CLI_USAGE', verbName ? `unknown verb "${verbName}" for ${command}` : `${command} needs a verb`, { command, verb: verbName }, { hint: await verbsUsage(command, dirUrl) });
  }
  const verb = ((await import(pathToFileURL(file).href)) as { default: Command }).default;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${verb.usage.trim()}\n`);
    return 0;
  }
  return verb.run(rest);
}
