/**
 * The central MQTT ingest against a real broker and the real attendance service: `edge-agent
 * ingest` processes sharing one subscription, each message acknowledged only after the API took
 * it (a process killed while the API is down loses nothing), repeats dropped by id, refusals on
 * the dead-letter topic, a check-out ahead of its check-in, /metrics and /health.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AttendanceClient } from '../../src/api/client.js';
import { setLogLevel } from '../../src/core/logger.js';
import { Ingest, INGEST_DEFAULTS, defaultDeadLetterTopic } from '../../src/ingest/ingest.js';
import { startBroker, type TestBroker } from '../helpers/broker.js';
import { killTree, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { nextMessage } from '../helpers/mqtt.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { has, needs } from '../helpers/system.js';

const PREFIX = 'att';
/** A central host: no terminal's config anywhere (the ingest needs none with its flags). */
const NO_CONFIG = {
  EDGE_AGENT_CONFIG: '',
  EDGE_AGENT_TEST_INSTALLED_CONFIG: '/nonexistent/edge-agent/config.yaml',
  EDGE_AGENT_TEST_DEMO_CONFIG: '',
};
let seq = 0;

function punch(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq++;
  return {
    id: `01INGEST${process.pid}${String(seq).padStart(10, '0')}`,
    terminal: 'T1',
    site: 'S1',
    employeeCode: 'E1',
    direction: 'in',
    time: '2024-08-01 08:00:00',
    tzOffset: 60,
    inTime: null,
    shift: null,
    source: 'finger',
    score: 0.93,
    clockSynced: true,
    clockCorrected: false,
    recordedAt: new Date().toISOString(),
    ...overrides,
  };
}

async function publisher(url: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, { clientId: `terminals-${process.pid}-${seq++}` });
}

async function publish(c: MqttClient, payloads: Array<Record<string, unknown> | string>, terminal = 'T1'): Promise<void> {
  await Promise.all(
    payloads.map((p) => c.publishAsync(`${PREFIX}/S1/${terminal}/events`, typeof p === 'string' ? p : JSON.stringify(p), { qos: 1 })),
  );
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function metric(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe.skipIf(!has('mosquitto'))(`edge-agent ingest on a shared subscription (${needs('mosquitto')})`, () => {
  let broker: TestBroker;
  let svc: InProcessService;
  let admin: AttendanceClient;
  let dir: string;
  let secretFile: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    setLogLevel('ingest', 'error');
    broker = await startBroker();
    svc = await startService();
    admin = new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret });
    for (const code of ['E1', 'E2', 'E3', 'E4']) await admin.addOrUpdateUser({ employeeCode: code, firstName: 'In', lastName: code });
    dir = mkdtempSync(join(tmpdir(), 'edge-agent-ingest-'));
    secretFile = join(dir, 'api-secret');
    writeFileSync(secretFile, svc.apiSecret, { mode: 0o600 });
  });
  afterEach(() => {
    for (const c of children.splice(0)) killTree(c);
  });
  afterAll(async () => {
    await svc?.stop();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An ingest process; `group` apart per test (a killed process's sessions stay members of theirs). */
  async function startIngest(
    clientId: string,
    group: string,
    extra: string[] = [],
    apiUrl = svc.url,
  ): Promise<{ child: ChildProcess; metricsUrl: string }> {
    const child = spawnCli(
      [
        'ingest',
        '--mqtt',
        broker.url,
        '--api',
        apiUrl,
        '--api-key',
        svc.apiKey,
        '--api-secret-file',
        secretFile,
        '--prefix',
        PREFIX,
        '--mqtt-client-id',
        clientId,
        '--group',
        group,
        '--connections',
        '4',
        '--metrics-port',
        '0',
        '--secrets',
        join(dir, 'no-secrets.yaml'),
        ...extra,
      ],
      { env: NO_CONFIG },
    );
    children.push(child);
    const [, metricsUrl] = await waitForLine(child, /metrics on (http:\/\/\S+)\/metrics/, 30_000, 'stdout');
    return { child, metricsUrl: metricsUrl! };
  }

  const stored = async (from: string, to: string) => (await admin.getEvents({ from, to })).returnValue!.map((e) => e.returnValue!);

  it('two processes share the messages; every event is stored once and acknowledged', async () => {
    const a = await startIngest(`share-a-${process.pid}`, 'share');
    const b = await startIngest(`share-b-${process.pid}`, 'share');
    const pub = await publisher(broker.url);
    const punches = Array.from({ length: 200 }, (_, i) =>
      punch({
        employeeCode: `E${(i % 4) + 1}`,
        time: `2024-08-02 ${String(6 + Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
      }),
    );
    await publish(pub, punches);
    await pub.endAsync();
    await until('200 events on the service', async () => (await stored('2024-08-02 00:00:00', '2024-08-02 23:59:59')).length === 200);
    await until(
      'both ingests to count what they took',
      async () =>
        (await metric(a.metricsUrl, 'ingest_events_accepted_total')) + (await metric(b.metricsUrl, 'ingest_events_accepted_total')) === 200,
    );
    const [fromA, fromB] = [
      await metric(a.metricsUrl, 'ingest_events_accepted_total'),
      await metric(b.metricsUrl, 'ingest_events_accepted_total'),
    ];
    expect(fromA).toBeGreaterThan(0);
    expect(fromB).toBeGreaterThan(0);
    expect(await metric(a.metricsUrl, 'ingest_pending_events')).toBe(0);
    const health = (await (await fetch(`${a.metricsUrl}/health`)).json()) as {
      healthy: boolean;
      connections: number;
      connectionsUp: number;
    };
    expect(health).toMatchObject({ healthy: true, connections: 4, connectionsUp: 4 });
    const text = await (await fetch(`${a.metricsUrl}/metrics`)).text();
    expect(text).toContain('# TYPE ingest_lag_seconds histogram');
    expect(text).toMatch(/^ingest_lag_seconds_count \d+$/m);
    expect(text).toMatch(/^ingest_events_accepted_per_second \d/m);
  });

  it('a process killed while the API is down loses nothing: its messages come back to its sessions', async () => {
    // The API is unreachable: nothing can be accepted, so nothing may be acknowledged.
    const down = 'http://127.0.0.1:9';
    const clientId = `kill-${process.pid}`;
    const first = await startIngest(clientId, 'kill', [], down);
    const pub = await publisher(broker.url);
    const punches = Array.from({ length: 6 }, (_, i) => punch({ employeeCode: 'E2', time: `2024-08-03 0${i}:00:00` }));
    await publish(pub, punches);
    await until('the ingest to hold them', async () => (await metric(first.metricsUrl, 'ingest_messages_received_total')) >= 4);
    await until('its requests to the API to fail', async () => (await metric(first.metricsUrl, 'ingest_api_failures_total')) > 0);
    expect(await metric(first.metricsUrl, 'ingest_events_accepted_total')).toBe(0);
    killTree(first.child);
    // Back, with the same client id and the API reachable.
    const second = await startIngest(clientId, 'kill');
    await until('all 6 on the service', async () => (await stored('2024-08-03 00:00:00', '2024-08-03 23:59:59')).length === 6);
    await until('the restarted ingest to count them', async () => (await metric(second.metricsUrl, 'ingest_events_accepted_total')) === 6);
    expect(await metric(second.metricsUrl, 'ingest_messages_redelivered_total')).toBeGreaterThan(0);
    await pub.endAsync();
  });

  it('refusals go to the dead-letter topic with the status and the original message, then are acknowledged', async () => {
    const { metricsUrl } = await startIngest(`dead-${process.pid}`, 'dead');
    const topic = defaultDeadLetterTopic(PREFIX);
    const unknown = nextMessage(broker.url, topic, (s) => s.includes('USER_NOT_AVAILABLE'));
    const garbage = nextMessage(broker.url, topic, (s) => s.includes('INVALID_PAYLOAD') && s.includes('sideways'));
    // E1 exists: its full-width look-alike is refused here as by the service, not folded into E1.
    const wide = nextMessage(broker.url, topic, (s) => s.includes('INVALID_PAYLOAD') && s.includes('compatibility form'));
    await new Promise((r) => setTimeout(r, 300)); // the listeners subscribe
    const pub = await publisher(broker.url);
    const who = punch({ employeeCode: 'NOBODY', time: '2024-08-04 08:00:00' });
    const twin = punch({ employeeCode: 'Ｅ１', time: '2024-08-04 08:00:00' });
    await publish(pub, [who, '{"id": "x", "direction": "sideways"}', twin]);
    const dead = JSON.parse(await unknown) as { status: string; description: string; event: Record<string, unknown>; ingest: string };
    expect(dead).toMatchObject({
      status: 'USER_NOT_AVAILABLE',
      event: { id: who.id, employeeCode: 'NOBODY' },
      ingest: `dead-${process.pid}`,
    });
    expect(dead.description).toContain('NOBODY');
    const bad = JSON.parse(await garbage) as { status: string; description: string; topic: string };
    expect(bad).toMatchObject({ status: 'INVALID_PAYLOAD', topic: `${PREFIX}/S1/T1/events` });
    const refusedTwin = JSON.parse(await wide) as { status: string; description: string };
    expect(refusedTwin.description).toMatch(/U\+FF25.*write it as "E1"/);
    await until('all three counted as dead letters', async () => (await metric(metricsUrl, 'ingest_dead_letters_total')) === 3);
    const stored = await admin.getEvents({ code: 'E1', from: '2024-08-04 00:00:00', to: '2024-08-04 23:59:59' });
    expect(stored.returnValue).toHaveLength(0);
    expect(await metric(metricsUrl, 'ingest_pending_events')).toBe(0);
    await pub.endAsync();
  });

  it('a check-out published before its check-in waits for it instead of becoming a dead letter', async () => {
    // An employee without other open check-ins (which the check-out would close instead).
    await admin.addOrUpdateUser({ employeeCode: 'ORDER1', firstName: 'Or', lastName: 'Der' });
    const { metricsUrl } = await startIngest(`order-${process.pid}`, 'order');
    const pub = await publisher(broker.url);
    await publish(pub, [punch({ employeeCode: 'ORDER1', direction: 'out', time: '2024-08-05 17:00:00' })]);
    await new Promise((r) => setTimeout(r, 500));
    await publish(pub, [punch({ employeeCode: 'ORDER1', direction: 'in', time: '2024-08-05 08:00:00' })]);
    await until(
      'the event closed',
      async () => (await stored('2024-08-05 00:00:00', '2024-08-05 23:59:59')).some((e) => e.outTime === '2024-08-05 17:00:00'),
      15_000,
    );
    expect(await metric(metricsUrl, 'ingest_dead_letters_total')).toBe(0);
    await pub.endAsync();
  });

  it('refuses --no-share with several connections, and a bad --mqtt-version, as usage errors; without a config it names the key flag it misses', async () => {
    for (const args of [['--no-share'], ['--mqtt-version', '6']]) {
      const child = spawnCli([
        'ingest',
        '--mqtt',
        broker.url,
        '--api',
        svc.url,
        '--api-key',
        'k',
        '--api-secret-file',
        secretFile,
        ...args,
      ]);
      children.push(child);
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code).toBe(2);
    }
    // Without its API key, and no config to find it in, the missing flag is named, with where it looked.
    const noKey = await runCli(['ingest', '--mqtt', broker.url, '--api', svc.url], { env: NO_CONFIG });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain(
      'CLI_USAGE: edge-agent ingest needs --api-key KEY (an admin API key of the attendance service); no configuration found (looked at: --config (not given)',
    );
    expect(noKey.stderr).not.toContain('CONFIG_NONE');
    const noSecret = await runCli(['ingest', '--mqtt', broker.url, '--api', svc.url, '--api-key', 'k'], { env: NO_CONFIG });
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('CLI_USAGE: edge-agent ingest needs --api-secret-file FILE');
  });
});

describe.skipIf(!has('mosquitto'))(`the ingest in this process: repeats and stop (${needs('mosquitto')})`, () => {
  let broker: TestBroker;
  let svc: InProcessService;

  beforeAll(async () => {
    setLogLevel('ingest', 'error');
    broker = await startBroker();
    svc = await startService();
    const admin = new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret });
    await admin.addOrUpdateUser({ employeeCode: 'E1', firstName: 'Re', lastName: 'Peat' });
  });
  afterAll(async () => {
    await svc?.stop();
    await broker?.stop();
  });

  const make = (clientId: string) =>
    new Ingest({
      ...INGEST_DEFAULTS,
      url: broker.url,
      prefix: PREFIX,
      group: 'tests',
      clientId,
      connections: 2,
      protocol: 'auto',
      api: new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret }),
      deadLetterTopic: defaultDeadLetterTopic(PREFIX),
    });

  it('drops repeats of an event id (acknowledged without a request) and speaks MQTT 5 to Mosquitto', async () => {
    const ingest = make(`repeat-${process.pid}`);
    await ingest.start();
    try {
      expect(ingest.protocol).toBe(5);
      const pub = await publisher(broker.url);
      const once = punch({ time: '2024-08-06 08:00:00' });
      await publish(pub, [once]);
      await until('accepted', () => ingest.metrics.accepted === 1);
      await publish(pub, [once, once]);
      await until('both repeats dropped', () => ingest.metrics.duplicates === 2);
      expect(ingest.metrics.accepted).toBe(1);
      expect(ingest.pendingCount).toBe(0);
      await pub.endAsync();
    } finally {
      await ingest.stop();
    }
  });

  it('stop drains: what arrives before it is accepted, then the process leaves the group', async () => {
    const ingest = make(`drain-${process.pid}`);
    await ingest.start();
    const pub = await publisher(broker.url);
    await publish(
      pub,
      Array.from({ length: 20 }, (_, i) => punch({ time: `2024-08-07 08:${String(i).padStart(2, '0')}:00` })),
    );
    await until('some received', () => ingest.metrics.received > 0);
    await ingest.stop();
    expect(ingest.pendingCount).toBe(0);
    expect(ingest.connectionsUp).toBe(0);
    await pub.endAsync();
  });
});

describe('the ingest on MQTT 3.1.1', () => {
  let svc: InProcessService;
  let admin: AttendanceClient;

  beforeAll(async () => {
    setLogLevel('ingest', 'error');
    svc = await startService();
    admin = new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret });
    await admin.addOrUpdateUser({ employeeCode: 'E1', firstName: 'Three', lastName: 'One' });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const ingestOn = (url: string, clientId: string, group: string | null, protocol: 4 | 'auto') =>
    new Ingest({
      ...INGEST_DEFAULTS,
      url,
      prefix: PREFIX,
      group,
      clientId,
      connections: group === null ? 1 : 2,
      protocol,
      api: new AttendanceClient({ baseUrl: svc.url, clientId: svc.clientId, apiKey: svc.apiKey, apiSecret: svc.apiSecret }),
      deadLetterTopic: defaultDeadLetterTopic(PREFIX),
    });
  const stored = async (day: string) =>
    (await admin.getEvents({ code: 'E1', from: `${day} 00:00:00`, to: `${day} 23:59:59` })).returnValue!.length;

  it('falls back to 3.1.1 on a broker that refuses MQTT 5 and stores every punch once with a plain subscription (aedes)', async () => {
    const broker = await startBroker({ prefer: 'aedes' });
    const ingest = ingestOn(broker.url, `plain-${process.pid}`, null, 'auto');
    try {
      await ingest.start();
      expect(ingest.protocol).toBe(4);
      const pub = await publisher(broker.url);
      await publish(
        pub,
        Array.from({ length: 5 }, (_, i) => punch({ time: `2024-08-10 08:0${i}:00` })),
      );
      await until('all accepted', () => ingest.metrics.accepted === 5);
      expect(await stored('2024-08-10')).toBe(5);
      expect(ingest.pendingCount).toBe(0);
      await pub.endAsync();
    } finally {
      await ingest.stop();
      await broker.stop();
    }
  });

  it.skipIf(!has('mosquitto'))(
    `shares a subscription over 3.1.1 where the broker takes $share there (Mosquitto; ${needs('mosquitto')})`,
    async () => {
      const broker = await startBroker();
      const ingests = [ingestOn(broker.url, `v311a-${process.pid}`, 'v311', 4), ingestOn(broker.url, `v311b-${process.pid}`, 'v311', 4)];
      try {
        for (const i of ingests) await i.start();
        expect(ingests.map((i) => i.protocol)).toEqual([4, 4]);
        const pub = await publisher(broker.url);
        await publish(
          pub,
          Array.from({ length: 40 }, (_, i) => punch({ time: `2024-08-11 08:${String(i).padStart(2, '0')}:00` })),
        );
        await until('all accepted', () => ingests[0]!.metrics.accepted + ingests[1]!.metrics.accepted === 40);
        expect(ingests.every((i) => i.metrics.accepted > 0)).toBe(true);
        expect(await stored('2024-08-11')).toBe(40);
        await pub.endAsync();
      } finally {
        for (const i of ingests) await i.stop();
        await broker.stop();
      }
    },
  );
});
