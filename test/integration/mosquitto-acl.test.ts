// The broker ACL example (systemd/mosquitto-acl.example) on a real Mosquitto with a password
// file: each terminal writes only under its own topics and reads only its own requests; central
// operations command and watch; site template records pass between the terminals of a site; the
// operations console publishes site alerts and Home Assistant discovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { freePort } from '../helpers/broker.js';
import { has, which } from '../helpers/system.js';

const USERS = ['gate-7', 'gate-8', 'ops-central', 'ops-console'] as const;

describe.skipIf(!has('mosquitto') || !has('mosquitto_passwd'))('the Mosquitto ACL example (needs mosquitto)', () => {
  let proc: ChildProcess;
  let url: string;
  beforeAll(async () => {
    // Started as root, mosquitto drops to its own user before it reads the password and ACL
    // files, which live in the test's private (0700) sandbox and checkout: it stays root here.
    const dir = mkdtempSync(join(tmpdir(), 'mosquitto-acl-'));
    chmodSync(dir, 0o755);
    const passwd = join(dir, 'passwd');
    writeFileSync(passwd, '', { mode: 0o644 });
    for (const u of USERS) expect(spawnSync(which('mosquitto_passwd')!, ['-b', passwd, u, `pw-${u}`]).status).toBe(0);
    chmodSync(passwd, 0o644);
    const port = await freePort();
    url = `mqtt://127.0.0.1:${port}`;
    const acl = join(dir, 'acl');
    copyFileSync(join(ROOT, 'systemd/mosquitto-acl.example'), acl);
    const asRoot = process.getuid?.() === 0 ? 'user root\n' : '';
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      `${asRoot}listener ${port} 127.0.0.1\nallow_anonymous false\npassword_file ${passwd}\nacl_file ${acl}\npersistence false\n`,
    );
    proc = spawn(which('mosquitto')!, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    proc.stderr!.on('data', (d: Buffer) => {
      said = (said + d.toString()).slice(-2000);
    });
    for (let i = 0; i < 100; i++) {
      const ok = await mqtt.connectAsync(url, { username: 'gate-7', password: 'pw-gate-7', reconnectPeriod: 0, connectTimeout: 500 }).then(
        (c) => c.endAsync().then(() => true),
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`mosquitto did not start with the ACL example: ${said || 'it printed nothing'}`);
  });
  afterAll(() => {
    proc?.kill('SIGKILL');
  });

  const as = (user: (typeof USERS)[number]) => mqtt.connectAsync(url, { username: user, password: `pw-${user}`, reconnectPeriod: 0 });
  /** What `client` receives on `filter` while `act` runs (and 400 ms after). */
  async function received(client: MqttClient, filter: string, act: () => Promise<unknown>): Promise<string[]> {
    const got: string[] = [];
    client.on('message', (t, m) => got.push(`${t} ${m.toString()}`));
    await client.subscribeAsync(filter, { qos: 1 });
    await act();
    await new Promise((r) => setTimeout(r, 400));
    return got;
  }

  it('lets a terminal write only its own topics and read only its own requests, operators command and watch, terminals share template records', async () => {
    const [g7, g8, ops] = await Promise.all([as('gate-7'), as('gate-8'), as('ops-central')]);
    try {
      // gate-8 writes its own state; its try at gate-7's state and at a command is dropped.
      const watched = await received(ops, 'attendance/#', async () => {
        await g8.publishAsync('attendance/plant/gate-8/state', 'online', { qos: 1 });
        await g8.publishAsync('attendance/plant/gate-7/state', 'lost', { qos: 1 });
        await g8.publishAsync('attendance/plant/gate-7/req/delete-user', '{"transaction":"x"}', { qos: 1 });
        await g8.publishAsync('attendance/plant/gate-7/res/ping', '{"forged":true}', { qos: 1 });
      });
      expect(watched).toEqual(['attendance/plant/gate-8/state online']);
      // Operators' commands reach the terminal addressed, and no other.
      const [to7, to8] = [
        received(g7, 'attendance/plant/+/req/#', async () => undefined),
        received(g8, 'attendance/plant/+/req/#', async () => undefined),
      ];
      await new Promise((r) => setTimeout(r, 100));
      await ops.publishAsync('attendance/plant/gate-7/req/ping', '{"transaction":"t1"}', { qos: 1 });
      expect(await to7).toEqual(['attendance/plant/gate-7/req/ping {"transaction":"t1"}']);
      expect(await to8).toEqual([]);
      // Site records pass between terminals.
      const shared = await received(g8, 'attendance/plant/templates/+', () =>
        g7.publishAsync('attendance/plant/templates/E1', 'sealed', { qos: 1 }),
      );
      expect(shared).toEqual(['attendance/plant/templates/E1 sealed']);
    } finally {
      await Promise.all([g7, g8, ops].map((c) => c.endAsync()));
    }
  });

  it('lets the operations console publish site alerts and Home Assistant discovery, and no terminal do so', async () => {
    const [g7, con, ops] = await Promise.all([as('gate-7'), as('ops-console'), as('ops-central')]);
    try {
      const watched = await received(ops, 'attendance/+/alerts', async () => {
        await g7.publishAsync('attendance/plant/alerts', '{"forged":true}', { qos: 1 });
        await con.publishAsync('attendance/plant/alerts', '{"count":0}', { qos: 1 });
      });
      expect(watched).toEqual(['attendance/plant/alerts {"count":0}']);
      const discovery = await received(con, 'homeassistant/#', async () => {
        await g7.publishAsync('homeassistant/sensor/x/config', 'forged', { qos: 1 });
        await con.publishAsync('homeassistant/sensor/edge_agent_plant_gate-7_queue/config', '{}', { qos: 1 });
      });
      expect(discovery).toEqual(['homeassistant/sensor/edge_agent_plant_gate-7_queue/config {}']);
      // It watches the terminals and commands them.
      const toG7 = received(g7, 'attendance/plant/gate-7/req/#', async () => undefined);
      await new Promise((r) => setTimeout(r, 100));
      await con.publishAsync('attendance/plant/gate-7/req/ping', '{"transaction":"c1"}', { qos: 1 });
      expect(await toG7).toEqual(['attendance/plant/gate-7/req/ping {"transaction":"c1"}']);
    } finally {
      await Promise.all([g7, con, ops].map((c) => c.endAsync()));
    }
  });
});
