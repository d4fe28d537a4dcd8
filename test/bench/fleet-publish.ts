/**
 * A fleet on a broker, simulated: the retained state, info and metrics of `terminals` terminals
 * (sites of 100), as real terminals publish them (src/ops/terminal-ops.ts), and then changes at a
 * given rate (metrics with a moving queue, now and then a terminal going offline and back).
 *
 *   tsx test/bench/fleet-publish.ts --mqtt mqtt://127.0.0.1:1883 [--prefix attendance] [--terminals 10000]
 *                                   [--updates-per-sec N --seconds S]
 *
 * Used by `npm run bench:fleet` and by hand against a real broker to try `edge-agent fleet`.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

export interface SimulatedFleet {
  prefix: string;
  terminals: number;
}

export function terminalName(i: number): { site: string; terminal: string } {
  return { site: `site-${String(Math.floor(i / 100)).padStart(3, '0')}`, terminal: `gate-${String(i % 100).padStart(2, '0')}` };
}

function info(i: number, at: string): string {
  const { site, terminal } = terminalName(i);
  return JSON.stringify({
    at, version: '0.1.0', terminal, site, mode: 'toggle', timeZone: 'Europe/Berlin', configVersion: 3, upstream: ['api', 'mqtt'], simulate: false,
    scanners: [{ key: 'r30x:/dev/ttyUSB0', status: 'ready', family: 'r30x', model: 'R503', firmware: '1.2', capacity: 200, templates: 120 }],
    templates: { finger: 120 + (i % 50), iris: 40, embedding: 0 }, clock: { synchronized: i % 97 !== 0, source: 'timedatectl' }, startedAt: at, node: 'v20.20.2',
  });
}

function metrics(i: number, at: string, tick: number): string {
  const pending = (i * 7 + tick * 13) % 40;
  return JSON.stringify({
    at,
    queue: { pending, dead: i % 53 === 0 ? 2 : 0, delivered: 1000 + tick * 3 + i, oldestPendingAgeSec: pending ? 12 + (tick % 30) : null, unsynced: 0, capFullPercent: 0, perSink: { api: { pending, dead: 0 } } },
    lastDelivery: at,
    upload: { batches: 100 + tick, delivered: 2000 + tick, dead: 0, retried: 0, recordOutcomesP50Ms: 2.1, recordOutcomesP95Ms: 4.8, recordOutcomesMaxMs: 9.3 },
    scanners: [{ key: 'r30x:/dev/ttyUSB0', status: 'ready', family: 'r30x' }],
    identification: { p95Ms: 41.2, byModality: [{ modality: 'finger', templates: 120, identifications: 300 + tick, p50Ms: 20.1, p95Ms: 41.2 }] },
    capture: { punched: 300 + tick, duplicate: 4, unknown: 1, tryAgain: 2, refused: 0, modulePathP95Ms: 180, hostPathP95Ms: null },
    siteSync: { published: 3, applied: 10, deleted: 0, errors: 0 },
    clock: { synchronized: true },
    system: { rssMb: 120 + (i % 20), heapUsedMb: 30, freeDiskMb: 20_000, cpuTempC: 48.5, uptimeSec: 3600 + tick * 30, loadAvg1: 0.4 },
    lastError: i % 211 === 0 ? 'API_TIMEOUT: the attendance service did not answer' : null,
    lastErrorAt: null,
  });
}

async function connect(url: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, { clientId: `fleet-publisher-${process.pid}-${Date.now()}`, clean: true, reconnectPeriod: 0 });
}

/** Publishes every terminal's retained state, info and metrics; resolves once the broker has them all. */
export async function publishFleet(url: string, fleet: SimulatedFleet): Promise<{ messages: number; ms: number }> {
  const t0 = performance.now();
  const client = await connect(url);
  const at = new Date().toISOString();
  let messages = 0;
  for (let i = 0; i < fleet.terminals; i++) {
    const { site, terminal } = terminalName(i);
    const base = `${fleet.prefix}/${site}/${terminal}`;
    client.publish(`${base}/state`, 'online', { qos: 0, retain: true });
    client.publish(`${base}/info`, info(i, at), { qos: 0, retain: true });
    client.publish(`${base}/metrics`, metrics(i, at, 0), { qos: 0, retain: true });
    messages += 3;
    if (i % 500 === 499) await client.publishAsync(`${fleet.prefix}/_publisher/progress`, String(i), { qos: 1 }); // pace with the broker
  }
  // The broker handles a connection's packets in order: once this is acknowledged, it has them all.
  await client.publishAsync(`${fleet.prefix}/_publisher/done`, 'done', { qos: 1 });
  await client.endAsync();
  return { messages, ms: Math.round(performance.now() - t0) };
}

/**
 * Publishes changes for `seconds` at `perSec` messages a second: metrics of random terminals
 * (queues moving), and one in fifty a terminal going offline or coming back. Returns the count.
 */
export async function publishChanges(url: string, fleet: SimulatedFleet, perSec: number, seconds: number): Promise<number> {
  const client = await connect(url);
  let sent = 0;
  let tick = 1;
  const end = Date.now() + seconds * 1000;
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  while (Date.now() < end) {
    const t0 = Date.now();
    const at = new Date().toISOString();
    const batch = Math.max(1, Math.round(perSec / 10));
    for (let k = 0; k < batch; k++) {
      const i = Math.floor(rand() * fleet.terminals);
      const { site, terminal } = terminalName(i);
      const base = `${fleet.prefix}/${site}/${terminal}`;
      if (k % 50 === 0) client.publish(`${base}/state`, tick % 2 ? 'offline' : 'online', { qos: 0, retain: true });
      else client.publish(`${base}/metrics`, metrics(i, at, tick), { qos: 0, retain: true });
      sent++;
    }
    tick++;
    await client.publishAsync(`${fleet.prefix}/_publisher/tick`, String(tick), { qos: 1 });
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - t0))));
  }
  await client.endAsync();
  return sent;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: { mqtt: { type: 'string' }, prefix: { type: 'string' }, terminals: { type: 'string' }, 'updates-per-sec': { type: 'string' }, seconds: { type: 'string' } },
    strict: true,
  });
  if (!values.mqtt) throw new Error('give --mqtt mqtt://host:port');
  const fleet = { prefix: values.prefix ?? 'attendance', terminals: Number(values.terminals ?? 10_000) };
  const r = await publishFleet(values.mqtt, fleet);
  process.stdout.write(`published ${r.messages} retained messages of ${fleet.terminals} terminals in ${r.ms} ms\n`);
  if (values['updates-per-sec']) {
    const n = await publishChanges(values.mqtt, fleet, Number(values['updates-per-sec']), Number(values.seconds ?? 10));
    process.stdout.write(`published ${n} changes\n`);
  }
}
