import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SdNotify, SystemdNotifier, watchdogIntervalMs } from '../../../src/daemon/sd-notify.js';

/**
 * A datagram socket standing in for systemd's notify socket: socat receives every datagram and
 * (with -v) writes each one with its length to stderr, so messages can be told apart. socat
 * keeps the barrier pipe systemd-notify passes, so these tests send with the barrier off.
 */
interface Receiver {
  path: string;
  messages(): string[];
  waitFor(n: number): Promise<string[]>;
  stop(): void;
}

async function startReceiver(): Promise<Receiver> {
  const path = join(mkdtempSync(join(tmpdir(), 'notify-')), 'notify.sock');
  const proc: ChildProcess = spawn('socat', ['-v', '-u', `UNIX-RECV:${path}`, '/dev/null'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let raw = '';
  proc.stderr!.on('data', (d: Buffer) => (raw += d.toString('utf8')));
  const parse = (): string[] => {
    const out: string[] = [];
    const re = /> \S+ \S+\s+length=(\d+) from=\d+ to=\d+\n/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(raw))) {
      const len = Number(m[1]);
      if (re.lastIndex + len > raw.length) break; // the rest of this datagram is still on its way
      out.push(raw.slice(re.lastIndex, re.lastIndex + len));
      re.lastIndex += len;
    }
    return out;
  };
  for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 20));
  return {
    path,
    messages: parse,
    async waitFor(n) {
      for (let i = 0; i < 250; i++) {
        if (parse().length >= n) return parse();
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`expected ${n} messages, got ${JSON.stringify(parse())}`);
    },
    stop: () => proc.kill('SIGKILL'),
  };
}

const receivers: Receiver[] = [];
afterEach(() => {
  for (const r of receivers.splice(0)) r.stop();
});

describe('sd_notify', () => {
  it('sends READY, STATUS, WATCHDOG and STOPPING as separate datagrams, in order', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const n = new SdNotify({ socket: rx.path, barrier: false });
    expect(n.enabled).toBe(true);
    expect(await n.ready('running: 2 scanners')).toBe(true);
    void n.status('uploading\n5 pending');
    void n.watchdog();
    await n.stopping();
    expect(await rx.waitFor(4)).toEqual(['READY=1\nSTATUS=running: 2 scanners', 'STATUS=uploading 5 pending', 'WATCHDOG=1', 'STOPPING=1']);
    expect(n.sent).toBe(4);
  });

  it('is a no-op without NOTIFY_SOCKET and never throws when the sender is missing', async () => {
    expect(await new SdNotify({ socket: null }).ready()).toBe(false);
    const missing = new SdNotify({ socket: '/tmp/x.sock', command: '/nonexistent/systemd-notify' });
    expect(await missing.ready()).toBe(false);
    expect(missing.enabled).toBe(false);
  });

  it('reports a failed send (no one listening) as false', async () => {
    const n = new SdNotify({ socket: join(mkdtempSync(join(tmpdir(), 'notify-')), 'absent.sock'), barrier: false });
    expect(await n.watchdog()).toBe(false);
    expect(n.sent).toBe(0);
  });

  it('reads the watchdog interval systemd asks for', () => {
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }, 42)).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42)).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '7' }, 42)).toBeNull();
    expect(watchdogIntervalMs({}, 42)).toBeNull();
  });

  it('the daemon component says READY on start, pings the watchdog while healthy, STOPPING on stop', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    let healthy = true;
    const c = new SystemdNotifier({
      notify: new SdNotify({ socket: rx.path, barrier: false }),
      env: { NOTIFY_SOCKET: rx.path, WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid) },
      readyStatus: () => 'ready: 0 pending',
      healthy: () => healthy,
    });
    await c.start();
    await rx.waitFor(3); // READY then at least two pings every 100 ms
    healthy = false;
    expect(await c.ping()).toBe(false);
    await c.stop();
    const msgs = await rx.waitFor(4);
    expect(msgs[0]).toBe('READY=1\nSTATUS=ready: 0 pending');
    expect(msgs.slice(1, -1).every((m) => m === 'WATCHDOG=1')).toBe(true);
    expect(msgs[msgs.length - 1]).toBe('STOPPING=1\nSTATUS=stopping');
  });

  it('started by the daemon, it reports the terminal when ready and the backlog with each ping', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const c = new SystemdNotifier({ notify: new SdNotify({ socket: rx.path, barrier: false }), env: { NOTIFY_SOCKET: rx.path } });
    await c.start({ config: { terminal: { id: 'gate-1' }, upstream: ['api', 'mqtt'] }, outbox: { status: async () => ({ pending: 3, dead: 1, unsynced: 2 }) } });
    await c.ping();
    const msgs = await rx.waitFor(2);
    expect(msgs).toEqual(['READY=1\nSTATUS=running: terminal gate-1, upstream api+mqtt', 'WATCHDOG=1\nSTATUS=3 pending, 1 dead, 2 before clock sync']);
    await c.stop();
  });

  it('pings without STATUS when the status is slow, so a busy database never delays the watchdog', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const c = new SystemdNotifier({ notify: new SdNotify({ socket: rx.path, barrier: false }), env: { NOTIFY_SOCKET: rx.path }, readyStatus: () => 'ready', status: () => new Promise<string>(() => undefined) });
    await c.start();
    expect(await c.ping()).toBe(true);
    expect(await rx.waitFor(2)).toEqual(['READY=1\nSTATUS=ready', 'WATCHDOG=1']);
    await c.stop();
  });

  it('uses systemd-notify with its barrier by default (--no-block only when SD_NOTIFY_BARRIER=0)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-args-'));
    const log = join(dir, 'args');
    const fake = join(dir, 'systemd-notify');
    writeFileSync(fake, `#!/bin/sh\nprintf '%s|' "$NOTIFY_SOCKET" "$@" >> ${log}\necho >> ${log}\n`, { mode: 0o755 });
    await new SdNotify({ socket: '/run/x.sock', command: fake }).ready('up');
    await new SdNotify({ socket: '/run/x.sock', command: fake, barrier: false }).watchdog();
    const saved = process.env.SD_NOTIFY_BARRIER;
    process.env.SD_NOTIFY_BARRIER = '0';
    try {
      await new SdNotify({ socket: '/run/x.sock', command: fake }).watchdog();
    } finally {
      if (saved === undefined) delete process.env.SD_NOTIFY_BARRIER;
      else process.env.SD_NOTIFY_BARRIER = saved;
    }
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['/run/x.sock|READY=1|STATUS=up|', '/run/x.sock|--no-block|WATCHDOG=1|', '/run/x.sock|--no-block|WATCHDOG=1|']);
  });
});
