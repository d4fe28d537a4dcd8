import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli, waitForLine } from '../helpers/cli.js';
import { startNotifyReceiver } from '../helpers/notify.js';
import { loads } from '../helpers/system.js';

/**
 * The real daemon under a stand-in for systemd's notify socket (a datagram socket bound with
 * unix-dgram): READY=1 with STATUS once started, WATCHDOG=1 at WATCHDOG_USEC/2, STOPPING=1 on
 * SIGTERM, each a datagram from the agent itself (NotifyAccess=main); and its logs are JSON lines
 * on stdout (journald), or readable lines with --log-format pretty.
 */
describe.skipIf(!loads('unix-dgram'))('edge-agent run under systemd (needs the unix-dgram addon)', { timeout: 60_000 }, () => {
  it('sends READY, STATUS, WATCHDOG and STOPPING over NOTIFY_SOCKET and logs JSON on stdout', async () => {
    const rx = await startNotifyReceiver();
    const data = mkdtempSync(join(tmpdir(), 'notify-data-'));
    const child = spawnCli(['run', '--data', data, '--upstream', 'mqtt', '--mqtt', 'mqtt://127.0.0.1:9'], {
      env: { NOTIFY_SOCKET: rx.path, WATCHDOG_USEC: '400000', EDGE_AGENT_LOG_LEVEL: 'info' },
    });
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    try {
      const msgs = await rx.waitFor((m) => m.filter((x) => x.startsWith('WATCHDOG=1')).length >= 2, 45_000);
      // Only the agent speaks on the socket (a failing timedatectl would otherwise send ERRNO=).
      expect(msgs[0]).toMatch(/^READY=1\nSTATUS=running: terminal terminal-1, upstream mqtt$/);
      expect(msgs.slice(1).every((m) => /^WATCHDOG=1\nSTATUS=\d+ pending, \d+ dead/.test(m))).toBe(true);
      const exited = new Promise<number | null>((r) => child.once('exit', r));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const all = await rx.waitFor((m) => m.some((x) => x.startsWith('STOPPING=1')));
      expect(all[all.length - 1]).toBe('STOPPING=1\nSTATUS=stopping');
      // journald gets one JSON object per line on stdout
      const lines = stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
      // sent by the agent itself, not by a systemd-notify per message
      expect(
        lines.map((l) => JSON.parse(l) as { module?: string; via?: string }).find((l) => l.module === 'agent:sd-notify'),
      ).toMatchObject({ via: 'socket' });
    } finally {
      child.kill('SIGKILL');
      rx.close();
    }
  });
});

describe('edge-agent run logs', { timeout: 60_000 }, () => {
  it('logs readable lines for a technician with --log-format pretty, and per-module levels from the config', async () => {
    const data = mkdtempSync(join(tmpdir(), 'notify-data-'));
    const child = spawnCli(['run', '--data', data, '--upstream', 'mqtt', '--mqtt', 'mqtt://127.0.0.1:9', '--log-format', 'pretty'], {
      env: { EDGE_AGENT_LOG_LEVEL: 'warn', EDGE_AGENT_LOGGING__MODULES: '{"agent:clock": "info"}' },
    });
    try {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d));
      await waitForLine(child, /\[agent:clock\]/, 45_000, 'stdout');
      // one line a record: "HH:MM:ss.mmm+hh:mm LEVEL [CODE: ]message  [module] key=value ..."
      const head = out.split('\n').find((l) => l.includes('[agent:clock]'))!;
      expect(head).toMatch(/^\d\d:\d\d:\d\d\.\d{3}([+-]\d\d:\d\d|Z) (INFO |WARN ) clock .*\[agent:clock\]/);
      expect(out).not.toContain('"level"');
      // agent:clock was raised to info by the config while the default level is warn
      expect(out).not.toMatch(/\[agent:daemon\]/);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
