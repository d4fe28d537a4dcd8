/**
 * Simulated terminals for the console benchmark: publishes, on one MQTT connection, what N
 * terminals publish (retained state, info and metrics under <prefix>/<site>/<terminal>/, as
 * src/daemon/runtime.ts shapes them), then keeps their metrics flowing at a given rate with
 * figures that move, and now and then a terminal that goes lost and comes back.
 *
 * The one simulated fleet of the benchmarks and tests: `npm run bench:console`, `npm run
 * bench:fleet` (10,000 terminals for `edge-agent fleet --watch`) and test/integration/fleet-cli.test.ts.
 *
 * Usable on its own against a broker:
 *   npx tsx test/bench/console-fleet-publisher.ts --mqtt mqtt://127.0.0.1:1883 --terminals 1000 --per-sec 100
 */
import mqtt, { type MqttClient } from 'mqtt';
import { SeededRandom } from '../../src/biometrics/image/seeded-random.js';

export interface SimulatedFleetOptions {
  url: string;
  prefix?: string;
  terminals: number;
  /** Terminals per site. */
  perSite?: number;
  seed?: number;
}

export interface SimulatedFleet {
  keys: string[];
  /** Publishes every terminal's retained state, info and metrics; resolves once the broker took them all. */
  publishAll(): Promise<void>;
  /** Publishes metrics updates at `perSec` (round robin over the terminals), with a state change every `flipEvery` updates. */
  flow(perSec: number, flipEvery?: number): { stop(): Promise<number> };
  close(): Promise<void>;
}

/** The site and terminal of simulated terminal `i` (sites of `perSite` terminals). */
export function terminalName(i: number, perSite = 50): { site: string; terminal: string } {
  return { site: `site-${String(Math.floor(i / perSite)).padStart(3, '0')}`, terminal: `gate-${String(i).padStart(4, '0')}` };
}

export async function simulatedFleet(o: SimulatedFleetOptions): Promise<SimulatedFleet> {
  const prefix = o.prefix ?? 'attendance';
  const perSite = o.perSite ?? 50;
  const seeded = new SeededRandom(o.seed ?? 42);
  const rnd = () => seeded.next();
  const client: MqttClient = await mqtt.connectAsync(o.url, {
    clientId: `bench-fleet-${process.pid}-${Date.now()}`,
    clean: true,
    reconnectPeriod: 0,
  });
  const terminals = Array.from({ length: o.terminals }, (_, i) => ({
    ...terminalName(i, perSite),
    pending: 0,
    dead: 0,
    punched: 0,
    state: 'online',
  }));
  const topic = (t: (typeof terminals)[number], leaf: string) => `${prefix}/${t.site}/${t.terminal}/${leaf}`;
  const info = (t: (typeof terminals)[number]) => ({
    version: '0.1.0',
    terminal: t.terminal,
    site: t.site,
    mode: 'toggle',
    timeZone: 'Europe/Berlin',
    configVersion: 3,
    upstream: ['api'],
    simulate: false,
    scanners: [
      { key: 'r30x:/dev/fingerprint0', status: 'ready', family: 'r30x', model: 'R503', firmware: '1.2', capacity: 200, templates: 120 },
    ],
    templates: { finger: 240 },
    clock: { synchronized: true },
    startedAt: new Date(Date.now() - 3_600_000).toISOString(),
    node: 'v20',
    at: new Date().toISOString(),
  });
  const metrics = (t: (typeof terminals)[number]) => {
    if (rnd() < 0.3) t.pending = Math.max(0, t.pending + Math.round((rnd() - 0.5) * 6));
    if (rnd() < 0.02) t.dead++;
    t.punched += Math.round(rnd() * 3);
    const now = Date.now();
    return {
      queue: {
        pending: t.pending,
        dead: t.dead,
        delivered: 1000 + t.punched,
        oldestPendingAgeSec: t.pending ? Math.round(rnd() * 600) : null,
        unsynced: 0,
        perSink: { api: { pending: t.pending, dead: t.dead } },
        held: { clock: 0, earlierBoot: 0, oldestClockSec: null, review: 0 },
      },
      lastDelivery: new Date(now - Math.round(rnd() * 60_000)).toISOString(),
      scanners: [{ key: 'r30x:/dev/fingerprint0', status: 'ready', family: 'r30x' }],
      identification: { p95Ms: Math.round(20 + rnd() * 30), byModality: [] },
      capture: {
        punched: t.punched,
        duplicate: 0,
        unknown: 0,
        tryAgain: 0,
        refused: 0,
        modulePathP95Ms: Math.round(100 + rnd() * 80),
        hostPathP95Ms: null,
        lastPunchAt: new Date(now - Math.round(rnd() * 120_000)).toISOString(),
      },
      siteSync: null,
      clock: { clockTrusted: true, clockSynchronized: true, clockSource: 'timedatectl' },
      alerts: [],
      system: {
        rssMb: Math.round(90 + rnd() * 20),
        heapUsedMb: 40,
        freeDiskMb: Math.round(2000 + rnd() * 8000),
        cpuTempC: Math.round((45 + rnd() * 20) * 10) / 10,
        uptimeSec: 3600,
        loadAvg1: 0.4,
      },
      lastError: null,
      lastErrorAt: null,
      at: new Date(now).toISOString(),
    };
  };
  const pub = (t: string, payload: unknown) =>
    client.publishAsync(t, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1, retain: true });

  return {
    keys: terminals.map((t) => `${t.site}/${t.terminal}`),
    async publishAll() {
      for (let i = 0; i < terminals.length; i += 100) {
        await Promise.all(
          terminals
            .slice(i, i + 100)
            .flatMap((t) => [pub(topic(t, 'state'), 'online'), pub(topic(t, 'info'), info(t)), pub(topic(t, 'metrics'), metrics(t))]),
        );
      }
    },
    flow(perSec, flipEvery = 200) {
      let n = 0;
      let sent = 0;
      let stopped = false;
      const tickMs = 50;
      const perTick = perSec * (tickMs / 1000);
      let credit = 0;
      const timer = setInterval(() => {
        if (stopped) return;
        credit += perTick;
        while (credit >= 1) {
          credit--;
          const t = terminals[n % terminals.length]!;
          n++;
          if (n % flipEvery === 0) {
            t.state = t.state === 'online' ? 'lost' : 'online';
            void pub(topic(t, 'state'), t.state).catch(() => undefined);
          } else void pub(topic(t, 'metrics'), metrics(t)).catch(() => undefined);
          sent++;
        }
      }, tickMs);
      return {
        async stop() {
          stopped = true;
          clearInterval(timer);
          return sent;
        },
      };
    },
    close: () => client.endAsync(),
  };
}

// On its own: publish and keep flowing until Ctrl-C.
if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1]! : fallback;
  };
  const fleet = await simulatedFleet({
    url: arg('mqtt', 'mqtt://127.0.0.1:1883'),
    terminals: Number(arg('terminals', '1000')),
    prefix: arg('prefix', 'attendance'),
  });
  await fleet.publishAll();
  const flow = fleet.flow(Number(arg('per-sec', '100')));
  process.stdout.write(`publishing ${fleet.keys.length} simulated terminals; Ctrl-C stops\n`);
  process.once(
    'SIGINT',
    () =>
      void flow
        .stop()
        .then(() => fleet.close())
        .then(() => process.exit(0)),
  );
}
