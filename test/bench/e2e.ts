/**
 * `npm run bench:e2e -- [--json] [--runs N] [--host-runs N] [--iris-runs N] [--iris-n N]`
 *
 * From a finger (or an eye) presented to the punch durable in the outbox, through the agent's own
 * components (template cache, identifier, extractor, scanner worker, punch policy, outbox on a real
 * SQLite file, uploader to the real attendance service on loopback), one path at a time:
 *
 *   modulePath  an R30x simulator on one end of a real socat pty at 57600 baud with pacing, the
 *               real driver on the other; the people's module templates are placed in the module's
 *               slots at start and the module's own search answers. Floor: the bits on the wire of
 *               the exchanges the path cannot do without, GenImg + Img2Tz + (HiSpeed)Search, each
 *               command and its acknowledgement, 10 bits a byte, at the baud rate.
 *   hostPath    the same link, the person not on the module: the search misses, the image comes up
 *               (UpImage, 256×288 at 4 bits) and is extracted and matched on the host. Floor: the
 *               image transfer's bits at the baud rate.
 *   iris        the iris camera simulator in-process on the HID seam, 100,000 iris templates in
 *               the cache (synthetic codes, plus the few people whose eyes the camera shows,
 *               enrolled as the terminal enrols: three captures of each eye, ENROLL_CAPTURES),
 *               eye presented → punch durable. At this size the 1:N decision accepts an eye at
 *               0.190 or closer (iris-decision.ts); one capture each left a later capture of eye
 *               9001 at 0.197 from it, refused, where three leave every probe at 0.151 or under.
 *
 * Latency is measured by this program from `present()` on the simulator to the outbox's
 * `recorded` event (emitted once the punch's transaction is committed, synchronous=FULL): so it
 * includes the presence poll (the R30x worker polls GenImg every 100 ms). The worker's own
 * `latencyMs` (presence noticed → durable) is reported beside it as `workerP50Ms`/`workerP95Ms`.
 * A path that cannot run on this build (no extractor yet) is printed with `"skipped": "reason"`.
 * The iris camera simulator draws the synthetic eye at capture time, inside the measured window
 * (a real camera exposes a frame instead): `breakdown.simulatorRenderMedianMs` says how long the
 * same frames take to draw again after the run; `p95Ms` stays the raw measurement.
 */
import { loadavg, cpus } from 'node:os';
import { rmSync } from 'node:fs';
import { setLogLevel } from '../../src/core/logger.js';
import { parseConfig, type AgentConfig } from '../../src/config/config.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { terminalComponents } from '../../src/daemon/wiring.js';
import type { TerminalRuntime } from '../../src/daemon/runtime.js';
import { createExtractor } from '../../src/terminal/engines.js';
import { loadSecrets, type Secrets } from '../../src/config/secrets.js';
import type { CaptureOutcome } from '../../src/terminal/scanner-worker.js';
import { openAgentDatabase } from '../../src/store/agent-db.js';
import { TemplateCache, type NewTemplate } from '../../src/store/template-cache.js';
import { SerialTransport } from '../../drivers/transport/serial-transport.js';
import { attachSimulator, createSimulatedScanner, type SimulatorControl } from '../../drivers/simulated.js';
import { syntheticImages } from '../../src/synthetic/simulator-sources.js';
import { HEADER_LENGTH, dataPacketsWireBytes } from '../../drivers/r30x/codec.js';
import { IMAGE_BYTES } from '../../drivers/r30x/protocol.js';
import { encodeIrisTemplate } from '../../src/biometrics/iris/iris-code.js';
import { syntheticIrisEye, syntheticIrisSample } from '../../src/synthetic/iris-code.js';
import { ENROLL_CAPTURES } from '../../src/terminal/enroller.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { startService, type InProcessService } from '../helpers/service.js';
import { progress } from '../../src/cli/progress.js';
import { moduleTemplateOf, terminalDir, type TerminalDir } from '../helpers/agent.js';
import { benchArgs } from './bench-args.js';

setLogLevel('*', 'error');
const { json, flag } = benchArgs();
const RUNS = flag('runs', 40);
const HOST_RUNS = flag('host-runs', 6);
const IRIS_RUNS = flag('iris-runs', 40);
const IRIS_N = flag('iris-n', 100_000);
const BAUD = 57600;
const log = (msg: string) => process.stderr.write(`${msg}\n`);

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
const round = (v: number) => Math.round(v * 10) / 10;

/** R30x packet on the wire: header (start, address, pid, length) + payload + checksum. */
const packet = (payload: number) => HEADER_LENGTH + payload + 2;
/** GenImg (1 / ack 1), Img2Tz (instruction + buffer / ack 1), HiSpeedSearch (1+1+2+2 / ack 1+2+2). */
export const MODULE_PATH_WIRE_BYTES = packet(1) + packet(1) + packet(2) + packet(1) + packet(6) + packet(5);

interface Terminal {
  runtime: TerminalRuntime;
  daemon: Daemon;
  stop(): Promise<void>;
}

async function startTerminal(config: AgentConfig, secrets: Secrets): Promise<Terminal> {
  const { runtime, components } = await terminalComponents(config, secrets, { ops: false, control: false, siteSync: false });
  const daemon = new Daemon({ config, secrets });
  for (const c of components) daemon.use(c);
  await daemon.start();
  return { runtime, daemon, stop: () => daemon.stop() };
}

function agentConfig(dir: TerminalDir, service: InProcessService, scanners: AgentConfig['scanners']): AgentConfig {
  return parseConfig(
    {
      terminal: { id: 'bench-e2e', site: 'bench', mode: 'in' },
      dataDir: dir.dataDir,
      api: { url: service.url, clientId: service.clientId },
      upstream: ['api'],
      // Every press is a punch (no dedupe window), so the same people can punch again and again.
      policy: { dedupeWindowSec: 0 },
      scanners,
      logging: { level: 'error' },
    },
    'bench',
  );
}

function secretsOf(dir: TerminalDir, service: InProcessService): Secrets {
  return { ...loadSecrets({ file: dir.secretsFile, credentialsDir: null }), apiKey: service.apiKey, apiSecret: service.apiSecret };
}

async function waitUntil(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Sample {
  ms: number;
  workerMs: number;
}

/** Presents `id`, waits for the punch to be durable and the worker's outcome, lifts. */
async function onePunch(
  t: Terminal,
  sim: SimulatorControl,
  scannerKey: string,
  id: number,
  expectPath: 'module' | 'host',
  timeoutMs: number,
): Promise<Sample> {
  const outbox = t.daemon.context!.outbox;
  const worker = t.runtime.workers.get(scannerKey)!;
  let durableAt = 0;
  const recorded = new Promise<void>((resolve) => {
    const on = () => {
      durableAt = performance.now();
      outbox.off('recorded', on);
      resolve();
    };
    outbox.on('recorded', on);
  });
  const outcome = new Promise<CaptureOutcome>((resolve) => {
    const on = (o: CaptureOutcome) => {
      worker.off('capture', on);
      resolve(o);
    };
    worker.on('capture', on);
  });
  // A random phase against the worker's presence poll.
  await new Promise((r) => setTimeout(r, Math.random() * 100));
  const t0 = performance.now();
  sim.present(id);
  const timer = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no punch within ${timeoutMs} ms for ${id}`)), timeoutMs).unref(),
  );
  const o = await Promise.race([outcome, timer]);
  if (o.result !== 'punched' || o.path !== expectPath) {
    sim.lift();
    throw new Error(`expected a ${expectPath}-path punch for ${id}, got ${o.result} on path ${o.path} (${o.detail ?? ''})`);
  }
  await recorded;
  sim.lift();
  // Let the worker see the lift and cool down before the next press.
  await new Promise((r) => setTimeout(r, 550));
  return { ms: durableAt - t0, workerMs: o.latencyMs };
}

function summarize(samples: Sample[]) {
  const ms = samples.map((s) => s.ms);
  const w = samples.map((s) => s.workerMs);
  return {
    runs: samples.length,
    p50Ms: round(quantile(ms, 0.5)),
    p95Ms: round(quantile(ms, 0.95)),
    maxMs: round(Math.max(...ms)),
    workerP50Ms: round(quantile(w, 0.5)),
    workerP95Ms: round(quantile(w, 0.95)),
  };
}

interface SerialRig {
  pty: PtyPair;
  sim: SimulatorControl;
  close(): Promise<void>;
}

/** The R30x simulator on one end of a real pty, paced at the baud rate. */
async function serialRig(): Promise<SerialRig> {
  const pty = await createPtyPair();
  const device = new SerialTransport({ path: pty.b, baud: BAUD });
  await device.open();
  const sim = await attachSimulator('r30x', device, { images: syntheticImages, baud: BAUD, pacing: true });
  return {
    pty,
    sim,
    close: async () => {
      await sim.close().catch(() => undefined);
      await pty.close();
    },
  };
}

async function modulePath(service: InProcessService): Promise<Record<string, unknown>> {
  const people = Array.from({ length: 10 }, (_, i) => ({ employeeCode: `M${100 + i}`, fingerId: 7000 + i }));
  const dir = terminalDir();
  const db = await openAgentDatabase(dir.dataDir);
  const cache = await TemplateCache.open(db, { key: dir.templateKey });
  for (const p of people) {
    const t = await moduleTemplateOf(p.fingerId);
    await cache.addTemplate({
      employeeCode: p.employeeCode,
      modality: 'finger',
      position: 'right-index',
      format: 'r30x-char',
      data: t.data,
    });
  }
  await db.close();
  const rig = await serialRig();
  const key = `r30x:${rig.pty.a}`;
  const t = await startTerminal(agentConfig(dir, service, [{ family: 'r30x', path: rig.pty.a, baud: BAUD }]), secretsOf(dir, service));
  try {
    await waitUntil(() => t.runtime.workers.get(key)?.status === 'ready', 30_000, 'module ready');
    const samples: Sample[] = [];
    const bar = progress('module-path punches', { total: RUNS, unit: 'punches' });
    for (let i = 0; i < RUNS; i++) {
      samples.push(await onePunch(t, rig.sim, key, people[i % people.length]!.fingerId, 'module', 10_000));
      bar.update(i + 1);
    }
    bar.finish();
    const floorMs = (MODULE_PATH_WIRE_BYTES * 10 * 1000) / BAUD;
    const s = summarize(samples);
    return {
      baud: BAUD,
      ...s,
      floorMs: round(floorMs),
      wireBytes: MODULE_PATH_WIRE_BYTES,
      ratioP50: round(s.p50Ms / floorMs),
      ratioP95: round(s.p95Ms / floorMs),
      templatesOnModule: people.length,
    };
  } finally {
    await t.stop();
    await rig.close();
    rmSync(dir.dataDir, { recursive: true, force: true });
  }
}

async function hostPath(service: InProcessService, extractorReady: boolean): Promise<Record<string, unknown>> {
  const packetSize = 128;
  const imageWireBytes = dataPacketsWireBytes(IMAGE_BYTES, packetSize) + packet(1) * 2; // UpImage command + ack, then the data packets
  const floorMs = (imageWireBytes * 10 * 1000) / BAUD;
  if (!extractorReady)
    return {
      baud: BAUD,
      floorMs: round(floorMs),
      skipped:
        'no image extractor here (createExtractor of src/terminal/engines.ts returned none: the models did not load): the host path cannot identify',
    };
  const dir = terminalDir();
  const people = Array.from({ length: 3 }, (_, i) => ({ employeeCode: `H${100 + i}`, id: 8000 + i }));
  // Enrol each person's host template by extracting a first capture of their finger.
  const db = await openAgentDatabase(dir.dataDir);
  const cache = await TemplateCache.open(db, { key: dir.templateKey });
  const { extractMs } = await enrolFromSimulator(cache, {
    family: 'r30x',
    modality: 'finger',
    position: 'right-index',
    captures: 1,
    people,
  });
  await db.close();
  const rig = await serialRig();
  const key = `r30x:${rig.pty.a}`;
  const t = await startTerminal(agentConfig(dir, service, [{ family: 'r30x', path: rig.pty.a, baud: BAUD }]), secretsOf(dir, service));
  try {
    await waitUntil(() => t.runtime.workers.get(key)?.status === 'ready', 30_000, 'module ready');
    const samples: Sample[] = [];
    const bar = progress('host-path punches', { total: HOST_RUNS, unit: 'punches' });
    for (let i = 0; i < HOST_RUNS; i++) {
      samples.push(await onePunch(t, rig.sim, key, people[i % people.length]!.id, 'host', 30_000));
      bar.update(i + 1);
    }
    bar.finish();
    const s = summarize(samples);
    const ident = t.runtime.identifier?.metrics().find((m) => m.modality === 'finger');
    return {
      baud: BAUD,
      ...s,
      floorMs: round(floorMs),
      wireBytes: imageWireBytes,
      ratioP50: round(s.p50Ms / floorMs),
      ratioP95: round(s.p95Ms / floorMs),
      breakdown: { extractMedianMs: round(quantile(extractMs, 0.5)), identifyP95Ms: ident?.p95Ms ?? null },
    };
  } finally {
    await t.stop();
    await rig.close();
    rmSync(dir.dataDir, { recursive: true, force: true });
  }
}

/**
 * Enrols each person from a simulated scanner of `family` (the scanner's simulator draws the
 * synthetic finger or eye `id`, impression n at its n-th capture): `captures` captures each,
 * extracted and stored in the cache at `position`. Returns the capture and extraction times.
 */
async function enrolFromSimulator(
  cache: TemplateCache,
  o: {
    family: 'r30x' | 'iris-hid';
    modality: 'finger' | 'iris';
    position: string;
    captures: number;
    people: Array<{ employeeCode: string; id: number }>;
  },
): Promise<{ captureMs: number[]; extractMs: number[] }> {
  const extractor = (await createExtractor())!;
  const { scanner, simulator } = await createSimulatedScanner(o.family, { images: syntheticImages });
  await scanner.open();
  const captureMs: number[] = [];
  const extractMs: number[] = [];
  try {
    for (const p of o.people)
      for (let capture = 0; capture < o.captures; capture++) {
        simulator.present(p.id);
        const c0 = performance.now();
        const image = await scanner.captureImage();
        captureMs.push(performance.now() - c0);
        simulator.lift();
        const e0 = performance.now();
        const x = await extractor.extract(o.modality, image);
        extractMs.push(performance.now() - e0);
        await cache.addTemplate({
          employeeCode: p.employeeCode,
          modality: o.modality,
          position: o.position,
          format: x.format,
          data: x.data,
          quality: Math.round(x.quality),
        });
      }
  } finally {
    await scanner.close();
    await simulator.close();
    await extractor.close();
  }
  return { captureMs, extractMs };
}

async function irisPath(service: InProcessService, extractorReady: boolean): Promise<Record<string, unknown>> {
  if (!extractorReady)
    return {
      n: IRIS_N,
      skipped:
        'no image extractor here (createExtractor of src/terminal/engines.ts returned none: the models did not load): an eye image cannot become an iris code',
    };
  const dir = terminalDir();
  const people = Array.from({ length: 5 }, (_, i) => ({ employeeCode: `I${100 + i}`, id: 9000 + i }));
  const db = await openAgentDatabase(dir.dataDir);
  const cache = await TemplateCache.open(db, { key: dir.templateKey });
  const t0 = performance.now();
  const { captureMs, extractMs } = await enrolFromSimulator(cache, {
    family: 'iris-hid',
    modality: 'iris',
    position: 'right',
    captures: ENROLL_CAPTURES,
    people,
  });
  // The rest of the gallery: synthetic iris codes of other eyes, in batches of 1000.
  const fill = IRIS_N - people.length * ENROLL_CAPTURES;
  for (let start = 0; start < fill; start += 1000) {
    const batch: NewTemplate[] = [];
    for (let i = start; i < Math.min(fill, start + 1000); i++) {
      const eye = syntheticIrisEye(1_000_000 + i);
      batch.push({
        employeeCode: `S${i}`,
        modality: 'iris',
        position: 'right',
        format: 'iris-code-v1',
        data: encodeIrisTemplate(syntheticIrisSample(eye, 1).code),
      });
    }
    await cache.addTemplates(batch);
  }
  await db.close();
  const fillMs = performance.now() - t0;
  log(`iris gallery of ${IRIS_N} stored in ${Math.round(fillMs)} ms`);
  const key = 'sim:iris-hid';
  const t1 = performance.now();
  const t = await startTerminal(agentConfig(dir, service, [{ family: 'iris-hid', path: 'sim' }]), secretsOf(dir, service));
  const buildMs = performance.now() - t1;
  try {
    await waitUntil(() => t.runtime.workers.get(key)?.status === 'ready' && t.runtime.simulators.has(key), 30_000, 'iris camera ready');
    const sim = t.runtime.simulators.get(key)!;
    const samples: Sample[] = [];
    const shown: Array<{ eye: number; impression: number }> = [];
    const impressions = new Map<number, number>();
    for (let i = 0; i < IRIS_RUNS; i++) {
      const eye = people[i % people.length]!.id;
      samples.push(await onePunch(t, sim, key, eye, 'host', 15_000));
      // The simulated camera renders impression n of the eye at its n-th capture.
      impressions.set(eye, (impressions.get(eye) ?? 0) + 1);
      shown.push({ eye, impression: impressions.get(eye)! });
    }
    // The simulated camera draws each synthetic eye when it captures (a real camera exposes a
    // frame instead): draw the same frames again to show that share.
    const render = syntheticImages.iris;
    const renderMs = shown.map(({ eye, impression }) => {
      const r0 = performance.now();
      render(eye, impression);
      return performance.now() - r0;
    });
    const ident = t.runtime.identifier?.metrics().find((m) => m.modality === 'iris');
    return {
      n: IRIS_N,
      indexed: t.runtime.identifier?.size('iris') ?? null,
      ...summarize(samples),
      // Where the time goes: a 640×480 capture over the in-process HID seam (unpaced), extraction
      // (worker thread, ONNX), the 1:N search; measured apart, under the same load.
      breakdown: {
        captureMedianMs: round(quantile(captureMs, 0.5)),
        extractMedianMs: round(quantile(extractMs, 0.5)),
        identifyP95Ms: ident?.p95Ms ?? null,
        simulatorRenderMedianMs: round(quantile(renderMs, 0.5)),
      },
      startMs: Math.round(buildMs),
    };
  } finally {
    await t.stop();
    rmSync(dir.dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const service = await startService();
  try {
    const extractorReady = (await createExtractor().then(async (x) => {
      await x?.close();
      return x !== null;
    })) as boolean;
    log('module path: R30x simulator on a pty at 57600 baud...');
    const module = await modulePath(service);
    log('host path...');
    const host = await hostPath(service, extractorReady);
    log('iris path...');
    const iris = await irisPath(service, extractorReady);
    const result = {
      bench: 'e2e',
      measured:
        'present() on the simulator → punch committed in the outbox (outbox "recorded" event); worker* = the scanner worker latencyMs (presence noticed → durable)',
      modulePath: module,
      hostPath: host,
      iris,
      mustShow: {
        modulePathP95AtMost1000Ms: typeof module.p95Ms === 'number' ? module.p95Ms <= 1000 : null,
        irisP95AtMost400MsWith100k: typeof iris.p95Ms === 'number' && IRIS_N >= 100_000 ? iris.p95Ms <= 400 : null,
      },
      loadAverage: loadavg().map((v) => Math.round(v * 100) / 100),
      cpus: cpus().length,
      node: process.version,
    };
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await service.stop();
  }
}

await main();
process.exit(0);
