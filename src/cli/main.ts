#!/usr/bin/env node
/**
 * `edge-agent <command> [args]`. Commands are the files of `./commands/`; see `command.ts`.
 * Exit codes: 0 success, 1 failure (an AgentError printed with its code and hint), 2 usage error.
 */
import { readdirSync } from 'node:fs';
import { dirname, extname, basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.js';
import { AgentError, describeError } from '../core/errors.js';

const here = dirname(fileURLToPath(import.meta.url));
const commandsDir = `${here}/commands`;

function commandFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of readdirSync(commandsDir)) {
    const ext = extname(f);
    if ((ext === '.ts' || ext === '.js') && !f.endsWith('.d.ts') && !f.endsWith('.map')) {
      files.set(basename(f, ext), `${commandsDir}/${f}`);
    }
  }
  return files;
}

async function load(file: string): Promise<Command> {
  const mod = (await import(pathToFileURL(file).href)) as { default: Command };
  return mod.default;
}

async function help(name?: string): Promise<number> {
  const files = commandFiles();
  if (name) {
    const file = files.get(name);
    if (!file) {
      process.stderr.write(`edge-agent: unknown command "${name}"\n`);
      return 2;
    }
    process.stdout.write(`${(await load(file)).usage.trim()}\n`);
    return 0;
  }
  const lines = ['usage: edge-agent <command> [options]', '', 'commands:'];
  for (const [n, file] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${n.padEnd(16)} ${(await load(file)).summary}`);
  }
  lines.push('', 'edge-agent help <command> shows the options of one command.');
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') return help(rest[0]);
  if (name === '--version' || name === 'version') {
    const { VERSION } = await import('../core/version.js');
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const file = commandFiles().get(name);
  if (!file) {
    process.stderr.write(`edge-agent: unknown command "${name}"; run "edge-agent help" for the list\n`);
    return 2;
  }
  const command = await load(file);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage.trim()}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    process.stderr.write(`edge-agent ${name}: ${describeError(err)}\n`);
    return err instanceof AgentError && err.code === 'CLI_USAGE' ? 2 : 1;
  }
}

const invokedDirectly = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly || process.argv[1]?.endsWith('/edge-agent')) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`edge-agent: ${describeError(err)}\n`);
      process.exitCode = 1;
    },
  );
}
