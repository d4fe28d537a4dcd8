import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../../src/cli/main.js';
import { AUDIENCES } from '../../../src/cli/command.js';

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
    const paths = commands.map((c) => c.path);
    for (const path of [
      'devices',
      'simulate r30x',
      'simulate gt521',
      'simulate iris',
      'serve',
      'keys create',
      'template info',
      'template compare',
      'template extract',
      'queue list',
    ])
      expect(paths).toContain(path);
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
    for (const name of ['provision', 'doctor', 'enroll', 'punch', 'queue', 'devices', 'simulate'])
      expect(technician).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    const group = (heading: string) => help.slice(help.indexOf(heading)).split('\n\n')[0]!;
    expect(group('For integrators:')).toMatch(/^ {2}template\b/m);
    for (const name of ['serve', 'keys'])
      expect(group('For a site running the attendance service:')).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    // Every command is in an audience's group: none left under a catch-all heading.
    for (const cmd of (await buildProgram()).commands)
      expect(Object.values<string>(AUDIENCES), `edge-agent ${cmd.name()}`).toContain(cmd.helpGroup());
  });

  it('refuses an unknown option on every command, before it does anything', async () => {
    const program = await buildProgram();
    const { main } = await import('../../../src/cli/main.js');
    const writes: string[] = [];
    const orig = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => {
      writes.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    try {
      for (const { path, cmd } of walk(program)) {
        if (path === 'help') continue;
        // The mandatory options given, so the unknown one is what the command stops at.
        const mandatory = cmd.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, o.argChoices?.[0] ?? 'x']);
        writes.length = 0;
        expect(await main([...path.split(' '), ...mandatory, '--no-such-flag']), `edge-agent ${path} --no-such-flag`).toBe(2);
        expect(writes.join(''), `edge-agent ${path} --no-such-flag`).toContain(
          `edge-agent ${path}: CLI_USAGE: unknown option '--no-such-flag'`,
        );
      }
    } finally {
      process.stderr.write = orig;
    }
  });

  it("states the attendance service's own defaults in serve --help", async () => {
    const { DEFAULT_CLIENT_ID, DEFAULT_TOKEN_TTL_SEC, DEFAULT_HTTP_LIMITS } = await import('../../../src/server/service.js');
    const serve = (await buildProgram()).commands.find((c) => c.name() === 'serve')!;
    const help = serve.helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain(`(default ${DEFAULT_CLIENT_ID})`);
    expect(help).toContain(`lifetime in seconds (default ${DEFAULT_TOKEN_TTL_SEC})`);
    expect(help).toContain(`closed as they come (default ${DEFAULT_HTTP_LIMITS.maxConnections})`);
  });

  it('refuses an unknown flag with a usage error that names it and exits 2', async () => {
    const { main } = await import('../../../src/cli/main.js');
    const writes: string[] = [];
    const orig = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => {
      writes.push(String(s));
      return true;
    }) as typeof process.stderr.write;
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
