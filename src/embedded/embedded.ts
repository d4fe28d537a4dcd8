/**
 * The embedded default (`npm start`, `edge-agent run --embedded`): the real daemon with
 * everything it talks to brought up beside it on loopback, so the whole product runs on a laptop:
 *
 *  - the attendance service (src/server) on 127.0.0.1 with its own SQLite file in the data folder,
 *  - an in-process MQTT broker (aedes) on 127.0.0.1,
 *  - simulated scanners (an R30x fingerprint module and an iris camera, byte-exact simulators),
 *  - a handful of synthetic employees, created in the service and enrolled through the real
 *    enrolment path (captures, quality gate, 1:N check, module enrolment, upload, site publish),
 *  - visitors who present a finger or an eye now and then.
 *
 * Secrets (API key, template and site keys) are generated once into `<data>/secrets.yaml`
 * (0600); the effective config of the run is written to `<data>/embedded-config.yaml` so the
 * other commands (`queue status --config data/embedded-config.yaml`, `fleet`) can follow along.
 *
 * Tested in test/integration/embedded-default.test.ts (npm start's parts: what is simulated, where
 * each listens, punches in the embedded service, a clean stop on Ctrl-C) and
 * test/unit/embedded/embedded.test.ts (the demo people's fingers are told apart).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import YAML from 'yaml';
import { AttendanceClient } from '../api/client.js';
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import type { BiometricModality } from '../core/modality.js';
import { createAttendanceService, type AttendanceService } from '../server/service.js';
import { writeFileAtomic } from '../core/atomic-file.js';
import { parseConfig, type AgentConfig } from '../config/config.js';
import { isCheckout } from '../config/locate.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker.js';
import { emptySecrets, generateKey, loadSecrets, writeSecrets, type Secrets } from '../config/secrets.js';
import type { TerminalRuntime } from '../daemon/runtime.js';

const log = logger('agent:embedded');

/**
 * The demo's people. Their synthetic fingers are six that no impression of another is taken for
 * (test/unit/embedded/embedded.test.ts; best impostor score 26.5 over eight impressions each, both
 * ways): some seeds make near twins (1002 and 1006 score up to 54, 1001 and 1003 up to 42, over the
 * enrolment's duplicate threshold of 40), and the demo then refused one of them now and then as
 * already enrolled.
 */
export const DEMO_EMPLOYEES = [
  { employeeCode: 'E1001', firstName: 'Ada', lastName: 'Lovelace', finger: 1001, eye: 2001 },
  { employeeCode: 'E1002', firstName: 'Grace', lastName: 'Hopper', finger: 1002, eye: 2002 },
  { employeeCode: 'E1003', firstName: 'Alan', lastName: 'Turing', finger: 1012, eye: 2003 },
  { employeeCode: 'E1004', firstName: 'Katherine', lastName: 'Johnson', finger: 1004, eye: 2004 },
  { employeeCode: 'E1005', firstName: 'Edsger', lastName: 'Dijkstra', finger: 1015, eye: 2005 },
  { employeeCode: 'E1006', firstName: 'Barbara', lastName: 'Liskov', finger: 1016, eye: 2006 },
] as const;

export interface EmbeddedParts {
  config: AgentConfig & { source: string | null };
  secrets: Secrets;
  service: AttendanceService;
  broker: EmbeddedBroker;
  /** What is simulated and where each part listens, for the first lines of the output. */
  banner: string[];
  close(): Promise<void>;
}

async function credentialsWork(url: string, clientId: string, s: Secrets): Promise<boolean> {
  if (!s.apiKey || !s.apiSecret) return false;
  try {
    await new AttendanceClient({ baseUrl: url, clientId, apiKey: s.apiKey, apiSecret: s.apiSecret, timeoutMs: 5000 }).getToken();
    return true;
  } catch {
    return false;
  }
}

export async function startEmbeddedParts(dataDirArg = 'data'): Promise<EmbeddedParts> {
  const dataDir = resolve(dataDirArg);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const clientId = 'edge-agent';
  const service = createAttendanceService({ dbPath: join(dataDir, 'service.db'), clientId });
  const url = await service.listen(0, '127.0.0.1');
  let broker: EmbeddedBroker;
  try {
    broker = await startEmbeddedBroker(0, '127.0.0.1');
  } catch (err) {
    await service.close();
    throw err;
  }
  const secretsFile = join(dataDir, 'secrets.yaml');
  let secrets = existsSync(secretsFile) ? loadSecrets({ file: secretsFile, credentialsDir: null }) : emptySecrets();
  let changed = false;
  if (!(await credentialsWork(url, clientId, secrets))) {
    const pair = await service.createApiKey('admin');
    secrets = { ...secrets, apiKey: pair.apiKey, apiSecret: pair.apiSecret };
    changed = true;
  }
  if (!secrets.templateKey) {
    secrets = { ...secrets, templateKey: generateKey() };
    changed = true;
  }
  if (!secrets.siteKey) {
    secrets = { ...secrets, siteKey: generateKey() };
    changed = true;
  }
  if (!secrets.opsKey) {
    // Signs the demo's MQTT commands (edge-agent ops send --config <the embedded config> ping).
    secrets = { ...secrets, opsKey: generateKey() };
    changed = true;
  }
  if (changed) writeSecrets(secretsFile, secrets);

  const raw = {
    terminal: {
      id: 'demo-terminal',
      site: 'demo-site',
      mode: 'toggle',
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
    },
    dataDir,
    api: { url, clientId },
    mqtt: { url: broker.url },
    upstream: ['api', 'mqtt'],
    simulate: true,
    policy: { dedupeWindowSec: 30 },
    ops: { metricsIntervalSec: 10 },
  };
  const configFile = join(dataDir, 'embedded-config.yaml');
  writeFileAtomic(
    configFile,
    `# Written by "edge-agent run --embedded" for this run (ports change between runs).\n${YAML.stringify(raw)}`,
    0o600,
  );
  const config = { ...parseConfig(raw, configFile), source: configFile };
  const banner = [
    'edge-agent: embedded default — nothing here touches real hardware or a real server.',
    `  simulated:          an R30x fingerprint module and an iris camera (byte-exact simulators, in-process)`,
    `  attendance service: ${url}  (SQLite ${join(dataDir, 'service.db')}, client id ${clientId})`,
    `  MQTT broker:        ${broker.url}  (in-process; topics under ${config.mqtt.prefix}/${config.terminal.site}/${config.terminal.id}/)`,
    `  data folder:        ${dataDir}  (outbox and encrypted templates in agent.db, secrets in secrets.yaml, mode 0600)`,
    `  employees:          ${DEMO_EMPLOYEES.map((e) => e.employeeCode).join(', ')} (synthetic), who punch now and then`,
    ...followAlong(configFile, broker.url),
    '  Ctrl-C stops everything cleanly.',
  ];
  return {
    config,
    secrets,
    service,
    broker,
    banner,
    close: async () => {
      await broker.close().catch(() => undefined);
      await service.close().catch(() => undefined);
    },
  };
}

/**
 * The commands to watch the demo from a second terminal, as they run where this copy is: in a
 * checkout through npm (`edge-agent` is not on the PATH there), after an install as `edge-agent`.
 */
export function followAlong(configFile: string, brokerUrl: string, checkout = isCheckout()): string[] {
  const commands = (cli: string) => [
    `${cli} queue status --config ${configFile}`,
    `${cli} fleet --mqtt ${brokerUrl}`,
    `${cli} ops send --config ${configFile} ping`,
  ];
  const lines = (label: string, cli: string) => commands(cli).map((c, i) => `  ${(i === 0 ? label : '').padEnd(20)}${c}`);
  return checkout
    ? [...lines('follow along:', 'npm run edge-agent --'), ...lines('  once installed:', 'edge-agent')]
    : lines('follow along:', 'edge-agent');
}

/** Presses (and lifts) a virtual finger or shows an eye again and again until `signal` fires. */
async function keepPresenting(rt: TerminalRuntime, key: string, id: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const sim = rt.simulators.get(key);
    sim?.present(id);
    await new Promise((r) => setTimeout(r, 400));
    sim?.lift();
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One person at the terminal at a time: enrolments and visits take turns. */
class Turns {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

type Enrolled = Set<string>;
const enrolledKey = (code: string, modality: BiometricModality) => `${code}:${modality}`;

/** Creates the demo employees in the service and enrols those the template cache lacks. */
export async function enrollDemoEmployees(
  rt: TerminalRuntime,
  client: AttendanceClient,
  say: (line: string) => void,
  turns = new Turns(),
  enrolled: Enrolled = new Set(),
  signal?: AbortSignal,
): Promise<void> {
  const { enroll } = await import('../terminal/enroller.js');
  const fingerKey = [...rt.workers.keys()].find((k) => k.includes('r30x'));
  const irisKey = [...rt.workers.keys()].find((k) => k.includes('iris'));
  for (const e of DEMO_EMPLOYEES) {
    if (signal?.aborted) return;
    await client.addOrUpdateUser({ employeeCode: e.employeeCode, firstName: e.firstName, lastName: e.lastName, status: '0' });
    const have = rt.cache ? await rt.cache.listTemplateMeta({ employeeCode: e.employeeCode }) : [];
    for (const [modality, key, id] of [
      ['finger', fingerKey, e.finger],
      ['iris', irisKey, e.eye],
    ] as const) {
      if (signal?.aborted) return;
      if (!key) continue;
      if (have.some((t) => t.modality === modality)) {
        enrolled.add(enrolledKey(e.employeeCode, modality));
        continue;
      }
      await turns.run(async () => {
        const ac = new AbortController();
        let presenting: Promise<void> = Promise.resolve();
        let started = false;
        // The simulated person presents only once enrolment holds the scanner (asks for a capture),
        // so the capture loop does not read the finger as a punch.
        const onProgress = (event: Record<string, unknown>) => {
          if (!started && event.step === 'capture') {
            started = true;
            presenting = keepPresenting(rt, key, id, ac.signal);
          }
          if (event.step === 'captures-done') ac.abort();
        };
        try {
          const r = await enroll(
            rt,
            client,
            { employeeCode: e.employeeCode, modality, position: modality === 'finger' ? 'right-index' : 'right', minQuality: 1 },
            onProgress,
            key,
          );
          enrolled.add(enrolledKey(e.employeeCode, modality));
          say(
            `enrolled ${e.employeeCode} (${e.firstName} ${e.lastName}): ${modality}, ${r.templates.length} templates, upload ${r.upload?.map((u) => u.statusCode).join('/') ?? r.uploadError ?? 'skipped'}`,
          );
        } catch (err) {
          say(`could not enrol ${e.employeeCode} ${modality}: ${toAgentError(err).message}`);
        } finally {
          ac.abort();
          await presenting;
          rt.simulators.get(key)?.lift();
        }
      });
    }
  }
}

/** Visitors: every few seconds an enrolled demo employee presents a finger or an eye. */
export function startVisitors(
  rt: TerminalRuntime,
  options: { minGapMs?: number; maxGapMs?: number; random?: () => number; turns?: Turns; enrolled?: Enrolled } = {},
): () => Promise<void> {
  const random = options.random ?? Math.random;
  const turns = options.turns ?? new Turns();
  const ac = new AbortController();
  const loop = (async () => {
    while (!ac.signal.aborted) {
      const gap = (options.minGapMs ?? 3000) + random() * ((options.maxGapMs ?? 7000) - (options.minGapMs ?? 3000));
      await new Promise((r) => setTimeout(r, gap));
      if (ac.signal.aborted) break;
      const choices = DEMO_EMPLOYEES.flatMap((e) =>
        (['finger', 'iris'] as const)
          .filter((m) => !options.enrolled || options.enrolled.has(enrolledKey(e.employeeCode, m)))
          .map((m) => ({ e, m })),
      );
      if (choices.length === 0) continue;
      const { e, m } = choices[Math.floor(random() * choices.length)]!;
      const key = [...rt.simulators.keys()].find((k) => (m === 'iris' ? k.includes('iris') : k.includes('r30x')));
      const sim = key ? rt.simulators.get(key) : undefined;
      if (!sim) continue;
      await turns.run(async () => {
        sim.present(m === 'iris' ? e.eye : e.finger);
        await new Promise((r) => setTimeout(r, 1500));
        sim.lift();
        await new Promise((r) => setTimeout(r, 300));
      });
    }
  })().catch((err: unknown) => log.warn({ err: toAgentError(err).toJSON() }, 'visitor loop stopped'));
  return async () => {
    ac.abort();
    await loop;
  };
}

/**
 * The demo floor: the synthetic employees are enrolled (first start only) while visitors who are
 * already enrolled come and punch, one person at the terminal at a time. Returns a stopper.
 */
export function startDemoFloor(rt: TerminalRuntime, client: AttendanceClient, say: (line: string) => void): () => Promise<void> {
  const turns = new Turns();
  const enrolled: Enrolled = new Set();
  const ac = new AbortController();
  const stopVisitors = startVisitors(rt, { turns, enrolled, minGapMs: 2000, maxGapMs: 6000 });
  const enrolling = enrollDemoEmployees(rt, client, say, turns, enrolled, ac.signal).catch((err: unknown) =>
    say(`enrolment stopped: ${toAgentError(err).message}`),
  );
  return async () => {
    ac.abort();
    await stopVisitors();
    await enrolling;
  };
}
