import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../../src/cli/main.js';

/** Every command of the tree, with its path from the program (`queue list`). */
function walk(cmd: Command, path: string[] = []): Array<{ path: string; cmd: Command }> {
  return cmd.commands.flatMap((c) => [{ path: [...path, c.name()].join(' '), cmd: c }, ...walk(c, [...path, c.name()])]);
}

/** The long flags the help text lists in its option sections. */
function listedFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    const m = /^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (m) flags.add(m[1]!);
  }
  return flags;
}

describe('edge-agent help', () => {
  it('lists exactly the flags each command accepts, for every command', async () => {
    const program = await buildProgram();
    const commands = walk(program).filter((c) => c.cmd.options.length > 0 || c.cmd.commands.length === 0);
    expect(commands.length).toBeGreaterThan(10);
    for (const { path, cmd } of commands) {
      if (path === 'help') continue;
      const accepted = new Set([...cmd.options.map((o) => o.long!).filter(Boolean), '--help']);
      expect(listedFlags(cmd.helpInformation()), `edge-agent ${path} --help`).toEqual(accepted);
    }
  });

  it('groups the commands by who uses them', async () => {
    const help = (await buildProgram()).helpInformation();
    for (const heading of ['For everyone:', 'For field technicians:', 'For central operations:']) expect(help).toContain(heading);
    const technician = help.slice(help.indexOf('For field technicians:'), help.indexOf('For central operations:'));
    for (const name of ['provision', 'doctor', 'enroll', 'punch', 'queue']) expect(technician).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });

  it('refuses an unknown flag with a usage error that names it and exits 2', async () => {
    const { main } = await import('../../../src/cli/main.js');
    const writes: string[] = [];
    const orig = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stderr.write;
    try {
      expect(await main(['queue', 'status', '--bogus'])).toBe(2);
      expect(await main(['queue'])).toBe(2);
    } finally {
      process.stderr.write = orig;
    }
    expect(writes.join('')).toMatch(/edge-agent queue status: CLI_USAGE: unknown option '--bogus'/);
    expect(writes.join('')).toMatch(/queue needs a verb: status, list, retry, purge/);
  });
});
