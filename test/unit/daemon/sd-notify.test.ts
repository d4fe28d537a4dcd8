import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SdNotify, SystemdNotifier, unixDgram, watchdogIntervalMs } from '../../../src/daemon/sd-notify.js';
import { startNotifyReceiver, type NotifyReceiver } from '../../helpers/notify.js';
import { has, loads } from '../../helpers/system.js';

const receivers: NotifyReceiver[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const r of receivers.splice(0)) r.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function receiver(): Promise<NotifyReceiver> {
  const rx = await startNotifyReceiver();
  receivers.push(rx);
  return rx;
}

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

const count = (n: number) => (m: string[]) => m.length >= n;

describe('sd_notify', () => {
  it('is a no-op without NOTIFY_SOCKET and never throws when neither the addon nor systemd-notify is there', async () => {
    expect(await new SdNotify({ socket: null }).ready()).toBe(false);
    const missing = new SdNotify({ socket: '/tmp/x.sock', dgram: null, command: '/nonexistent/systemd-notify' });
    expect(missing.via).toBe('systemd-notify');
    expect(await missing.ready()).toBe(false);
    expect(missing.enabled).toBe(false);
  });

  it('reads the watchdog interval systemd asks for', () => {
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }, 42)).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42)).toBe(15_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '7' }, 42)).toBeNull();
    expect(watchdogIntervalMs({}, 42)).toBeNull();
  });

  it('without the addon, spawns systemd-notify with its barrier by default (--no-block only when SD_NOTIFY_BARRIER=0)', async () => {
    const dir = tempDir('notify-args-');
    const log = join(dir, 'args');
    const fake = join(dir, 'systemd-notify');
    writeFileSync(fake, `#!/bin/sh\nprintf '%s|' "$NOTIFY_SOCKET" "$@" >> ${log}\necho >> ${log}\n`, { mode: 0o755 });
    await new SdNotify({ socket: '/run/x.sock', dgram: null, command: fake }).ready('up');
    await new SdNotify({ socket: '/run/x.sock', dgram: null, command: fake, barrier: false }).watchdog();
    const saved = process.env.SD_NOTIFY_BARRIER;
    process.env.SD_NOTIFY_BARRIER = '0';
    try {
      await new SdNotify({ socket: '/run/x.sock', dgram: null, command: fake }).watchdog();
    } finally {
      if (saved === undefined) delete process.env.SD_NOTIFY_BARRIER;
      else process.env.SD_NOTIFY_BARRIER = saved;
    }
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      '/run/x.sock|READY=1|STATUS=up|',
      '/run/x.sock|--no-block|WATCHDOG=1|',
      '/run/x.sock|--no-block|WATCHDOG=1|',
    ]);
  });

  it('an abstract socket (@name) goes through systemd-notify: the addon addresses paths only', () => {
    const fakeAddon = {
      createSocket: () => {
        throw new Error('not used');
      },
    };
    expect(new SdNotify({ socket: '@/org/freedesktop/systemd1/notify', dgram: fakeAddon }).via).toBe('systemd-notify');
    expect(new SdNotify({ socket: `/run/${'x'.repeat(120)}`, dgram: fakeAddon }).via).toBe('systemd-notify');
    expect(new SdNotify({ socket: '/run/systemd/notify', dgram: fakeAddon }).via).toBe('socket');
  });
});

describe.skipIf(!loads('unix-dgram'))('sd_notify over an AF_UNIX datagram socket (needs the unix-dgram addon)', () => {
  it('sends READY, STATUS, WATCHDOG and STOPPING as separate datagrams from this process, in order', async () => {
    const rx = await receiver();
    const n = new SdNotify({ socket: rx.path });
    expect(n.via).toBe('socket');
    expect(n.enabled).toBe(true);
    expect(await n.ready('running: 2 scanners')).toBe(true);
    void n.status('uploading\n5 pending');
    void n.watchdog();
    await n.stopping();
    expect(await rx.waitFor(count(4))).toEqual([
      'READY=1\nSTATUS=running: 2 scanners',
      'STATUS=uploading 5 pending',
      'WATCHDOG=1',
      'STOPPING=1',
    ]);
    expect(n.sent).toBe(4);
  });

  it('reports a failed send (no one listening) as false, and true again once someone listens', async () => {
    const path = join(tempDir('notify-'), 'later.sock');
    const n = new SdNotify({ socket: path });
    expect(await n.watchdog()).toBe(false);
    expect(await n.watchdog()).toBe(false);
    expect(n.sent).toBe(0);
    expect(n.enabled).toBe(true); // a socket that is not there yet is no reason to stop trying
    const rx = await startNotifyReceiver(path);
    receivers.push(rx);
    expect(await n.watchdog()).toBe(true);
    expect(await rx.waitFor(count(1))).toEqual(['WATCHDOG=1']);
  });

  it('spawns no process per message', async () => {
    const rx = await receiver();
    const n = new SdNotify({ socket: rx.path, command: '/nonexistent/systemd-notify' });
    for (let i = 0; i < 20; i++) expect(await n.watchdog()).toBe(true);
    expect(await rx.waitFor(count(20))).toHaveLength(20);
    expect(n.enabled).toBe(true); // the missing systemd-notify was never tried
  });

  it('the daemon component says READY on start, pings the watchdog while healthy, STOPPING on stop', async () => {
    const rx = await receiver();
    let healthy = true;
    const c = new SystemdNotifier({
      notify: new SdNotify({ socket: rx.path }),
      env: { NOTIFY_SOCKET: rx.path, WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid) },
      readyStatus: () => 'ready: 0 pending',
      healthy: () => healthy,
    });
    await c.start();
    await rx.waitFor(count(3)); // READY then at least two pings every 100 ms
    healthy = false;
    expect(await c.ping()).toBe(false);
    await c.stop();
    const msgs = await rx.waitFor((m) => m.some((x) => x.startsWith('STOPPING=1')));
    expect(msgs[0]).toBe('READY=1\nSTATUS=ready: 0 pending');
    expect(msgs.slice(1, -1).every((m) => m === 'WATCHDOG=1')).toBe(true);
    expect(msgs[msgs.length - 1]).toBe('STOPPING=1\nSTATUS=stopping');
  });

  it('started by the daemon, it reports the terminal when ready and the backlog with each ping', async () => {
    const rx = await receiver();
    const c = new SystemdNotifier({ notify: new SdNotify({ socket: rx.path }), env: { NOTIFY_SOCKET: rx.path } });
    await c.start({
      config: { terminal: { id: 'gate-1' }, upstream: ['api', 'mqtt'] },
      outbox: { status: async () => ({ pending: 3, dead: 1, unsynced: 2 }) },
    });
    await c.ping();
    expect(await rx.waitFor(count(2))).toEqual([
      'READY=1\nSTATUS=running: terminal gate-1, upstream api+mqtt',
      'WATCHDOG=1\nSTATUS=3 pending, 1 dead, 2 before clock sync',
    ]);
    await c.stop();
  });

  it('pings without STATUS when the status is slow, so a busy database never delays the watchdog', async () => {
    const rx = await receiver();
    const c = new SystemdNotifier({
      notify: new SdNotify({ socket: rx.path }),
      env: { NOTIFY_SOCKET: rx.path },
      readyStatus: () => 'ready',
      status: () => new Promise<string>(() => undefined),
    });
    await c.start();
    expect(await c.ping()).toBe(true);
    expect(await rx.waitFor(count(2))).toEqual(['READY=1\nSTATUS=ready', 'WATCHDOG=1']);
    await c.stop();
  });
});

describe.skipIf(!loads('unix-dgram') || !has('systemd-notify'))(
  'sd_notify through the real systemd-notify where the addon is missing (needs systemd-notify, the unix-dgram addon)',
  () => {
    it('delivers the same datagrams', async () => {
      const rx = await receiver();
      // A receiver that is not systemd never closes the barrier pipe, hence barrier: false.
      const n = new SdNotify({ socket: rx.path, dgram: null, barrier: false });
      expect(n.via).toBe('systemd-notify');
      expect(await n.ready('up')).toBe(true);
      expect(await n.watchdog()).toBe(true);
      expect(await rx.waitFor(count(2))).toEqual(['READY=1\nSTATUS=up', 'WATCHDOG=1']);
    });
  },
);

it('unixDgram() loads the addon once, or says null where it is not installed', () => {
  expect(unixDgram()).toBe(unixDgram());
  expect(unixDgram() !== null).toBe(loads('unix-dgram'));
});
