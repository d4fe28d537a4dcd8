/**
 * Simulated terminals for bench:central, in a child process: terminals `from`..`to`-1 connect to
 * the broker (mqtt.js, QoS 1, as the agent's MQTT sink publishes) and, on each `run` message,
 * publish their share of the punches at their share of the rate, round robin, each terminal's
 * employees alternating check-in and check-out (the check-out carries its check-in's inTime).
 * A punch counts as published at the broker's PUBACK; one without is sent again, as the outbox
 * does. The parent gets `progress` messages and, at the end, what was published.
 *
 *   tsx test/bench/central-terminals.ts <broker url> <prefix> <from> <to> <employees per terminal>
 *   parent → child: {type: 'run', total, rate, day}     child → parent: {type: 'ready'} | {type: 'progress', sent} | {type: 'done', ...}
 */
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { formatDateTime } from '../../src/api/date-time.js';

export interface TerminalsRun {
  type: 'run';
  total: number;
  rate: number;
  day: string;
}

export interface TerminalsDone {
  type: 'done';
  /** [employee, inTime, outTime | null, published at (ms)] per punch. */
  published: Array<[string, string, string | null, number]>;
  firstPublishAt: number;
  lastPublishAt: number;
  retries: number;
}

const [url, prefix, fromText, toText, perTerminalText] = process.argv.slice(2) as [string, string, string, string, string];
const from = Number(fromText);
const to = Number(toText);
const EMPLOYEES_PER_TERMINAL = Number(perTerminalText);
const tag = randomBytes(4).toString('hex');
const counts = new Map<string, number>();
const clients: MqttClient[] = [];
let seq = 0;
let retries = 0;

async function connect(): Promise<void> {
  for (let i = from; i < to; i += 50) {
    const batch = Array.from({ length: Math.min(50, to - i) }, (_, j) =>
      mqtt.connectAsync(url, { clientId: `bench-terminal-${i + j}`, clean: true, reconnectPeriod: 1000, keepalive: 60 }),
    );
    clients.push(...(await Promise.all(batch)));
  }
}

async function run({ total, rate, day }: TerminalsRun): Promise<void> {
  const base = Date.parse(`${day}T00:00:00Z`);
  const published: TerminalsDone['published'] = [];
  const n = clients.length;
  let inFlight = 0;
  let sent = 0;
  const started = Date.now();
  let lastPublishAt = started;
  const publish = (t: number) => {
    const terminal = from + t;
    const employee = `E${terminal * EMPLOYEES_PER_TERMINAL + (Math.floor(sent / n) % EMPLOYEES_PER_TERMINAL)}`;
    const k = counts.get(`${day}|${employee}`) ?? 0;
    counts.set(`${day}|${employee}`, k + 1);
    const inTime = formatDateTime(base + Math.floor(k / 2) * 60_000);
    const outTime = k % 2 === 1 ? formatDateTime(base + Math.floor(k / 2) * 60_000 + 30_000) : null;
    const at = Date.now();
    published.push([employee, inTime, outTime, at]);
    const payload = JSON.stringify({
      id: `${tag}${(seq++).toString(36)}`,
      terminal: `T${terminal}`,
      site: `S${terminal % 10}`,
      employeeCode: employee,
      direction: outTime ? 'out' : 'in',
      time: outTime ?? inTime,
      tzOffset: 0,
      inTime: outTime ? inTime : null,
      shift: null,
      source: 'finger',
      score: 0.9,
      clockSynced: true,
      clockCorrected: false,
      recordedAt: new Date(at).toISOString(),
    });
    inFlight++;
    const attempt = () =>
      clients[t]!.publish(`${prefix}/S${terminal % 10}/T${terminal}/events`, payload, { qos: 1 }, (err) => {
        if (!err) inFlight--;
        else {
          retries++;
          setTimeout(attempt, 500);
        }
      });
    attempt();
  };
  const progress = setInterval(() => process.send!({ type: 'progress', sent }), 100);
  await new Promise<void>((resolve) => {
    let t = 0;
    const tick = () => {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate) + 1);
      while (sent < due) {
        publish(t);
        t = (t + 1) % n;
        sent++;
      }
      lastPublishAt = Date.now();
      if (sent < total) setTimeout(tick, 5);
      else resolve();
    };
    tick();
  });
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
  clearInterval(progress);
  process.send!({ type: 'progress', sent });
  const done: TerminalsDone = { type: 'done', published, firstPublishAt: started, lastPublishAt, retries };
  process.send!(done);
}

process.on('message', (m: TerminalsRun | { type: 'close' }) => {
  if (m.type === 'run') void run(m);
  else void Promise.all(clients.map((c) => c.endAsync().catch(() => undefined))).then(() => process.exit(0));
});
await connect();
process.send!({ type: 'ready' });
