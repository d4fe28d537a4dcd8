/**
 * `npm run bench:drivers -- [--json] [--bauds 9600,115200] [--runs N]`
 *
 * Times bulk transfers between the real drivers and their byte-exact simulators over a real socat
 * pty at each baud rate, and compares each with the link floor: the bits the exchange puts on the
 * wire (command, answer and data packets, 10 bits a byte) divided by the baud rate.
 *
 *   R30x   UpChar (512-byte character file), DownChar+Store, UpImage (256×288 at 4 bits), Search
 *   GT-521 GetTemplate (498 bytes), GetRawImage (160×120), GetImage (258×202)
 *   iris   one 640×480 capture result over the HID seam (in-process: HID has no pty); its floor
 *          is the input reports it needs (59 payload bytes each) × the report interval (1 ms,
 *          a full-speed interrupt endpoint); `baud` is null for it
 *
 * The simulators pace their output on a line clock and answer no earlier than the host's bytes
 * would have arrived, so the floor is what real hardware would take; the ratio says what the
 * driver, the pty and the scheduler add. Search (a 33-byte exchange) is latency, not bulk: it is
 * listed but `worstRatio` covers the bulk transfers only (`worstRatioAll` covers everything).
 */
import { loadavg, cpus } from 'node:os';
import { setLogLevel } from '../../src/core/logger.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { SerialTransport } from '../../drivers/transport/serial-transport.js';
import { R30xSimulator } from '../../drivers/r30x/simulator.js';
import { R30xDriver } from '../../drivers/r30x/driver.js';
import { HEADER_LENGTH, dataPacketsWireBytes } from '../../drivers/r30x/codec.js';
import { CHAR_FILE_BYTES, IMAGE_BYTES } from '../../drivers/r30x/protocol.js';
import { syntheticImages } from '../../src/synthetic/simulator-sources.js';
import { Gt521Simulator } from '../../drivers/gt521/simulator.js';
import { Gt521Driver } from '../../drivers/gt521/driver.js';
import { createSimulatedScanner } from '../../drivers/simulated.js';
import { resultWireBytes } from '../../drivers/iris-hid/simulator.js';
import type { IrisHidScanner } from '../../drivers/iris-hid/scanner.js';
import { CHUNK_PAYLOAD, IrisImageKind } from '../../drivers/iris-hid/protocol.js';
import {
  IMAGE_SIZE as GT_IMAGE_SIZE,
  PACKET_SIZE as GT_PACKET,
  RAW_IMAGE_SIZE as GT_RAW_SIZE,
  TEMPLATE_SIZE as GT_TEMPLATE_SIZE,
} from '../../drivers/gt521/protocol.js';

interface Transfer {
  name: string;
  baud: number | null;
  /** Median of the runs. */
  ms: number;
  floorMs: number;
  ratio: number;
  /** Fastest run and its ratio (what the code does when the board is not busy with others). */
  minMs: number;
  minRatio: number;
  bulk: boolean;
  wireBytes: number;
  runs: number;
}

setLogLevel('*', 'warn');
const args = process.argv.slice(2);
const json = args.includes('--json');
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const BAUDS = (flag('bauds') ?? '9600,19200,38400,57600,115200').split(',').map(Number);
const RUNS = Number(flag('runs') ?? 3);
/** Small transfers are cheap: more runs, so one scheduler hiccup on a loaded board does not decide the median. */
const SMALL_RUNS = Math.max(7, RUNS);

const floorMs = (bytes: number, baud: number) => (bytes * 10 * 1000) / baud;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Fastest run of the last `time()` call (the figure with the least scheduler noise). */
let lastMin = 0;

async function time(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  lastMin = Math.min(...ms);
  return median(ms);
}

function record(
  out: Transfer[],
  name: string,
  baud: number | null,
  ms: number,
  wireBytes: number,
  bulk: boolean,
  runs: number,
  floor?: number,
): void {
  const f = floor ?? floorMs(wireBytes, baud!);
  out.push({
    name,
    baud,
    ms: round(ms),
    floorMs: round(f),
    ratio: round(ms / f, 3),
    minMs: round(lastMin),
    minRatio: round(lastMin / f, 3),
    bulk,
    wireBytes,
    runs,
  });
  if (!json)
    process.stderr.write(
      `${name.padEnd(22)} ${String(baud ?? 'usb').padStart(6)} baud  ${round(ms).toFixed(1).padStart(9)} ms  floor ${round(f).toFixed(1).padStart(9)} ms  ×${(ms / f).toFixed(3)}\n`,
    );
}

function round(x: number, digits = 1): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

async function pairAt(baud: number): Promise<{ pair: PtyPair; device: SerialTransport; host: SerialTransport }> {
  const pair = await createPtyPair();
  const device = new SerialTransport({ path: pair.b, baud });
  await device.open();
  const host = new SerialTransport({ path: pair.a, baud });
  return { pair, device, host };
}

async function benchR30x(baud: number, out: Transfer[]): Promise<void> {
  const { pair, device, host } = await pairAt(baud);
  const sim = new R30xSimulator(device, { baud, pacing: true, imageSource: syntheticImages.finger, model: 'R503' });
  await host.open();
  const d = new R30xDriver(host, { baud, timeoutMs: 1000 });
  try {
    const params = await d.readSystemParameters();
    const packet = params.packetSize;
    for (let s = 0; s < 50; s++) sim.enroll(s * 4, 1000 + s);
    sim.present(1010);
    await d.genImg();
    await d.img2Tz(1);
    const cmd = (paramBytes: number) => HEADER_LENGTH + 2 + 1 + paramBytes;
    const ack = (paramBytes: number) => HEADER_LENGTH + 2 + 1 + paramBytes;

    const charWire = cmd(1) + ack(0) + dataPacketsWireBytes(CHAR_FILE_BYTES, packet);
    let template: Buffer = Buffer.alloc(0);
    const upChar = await time(SMALL_RUNS, async () => (template = await d.upChar(1)));
    record(out, 'r30x UpChar', baud, upChar, charWire, true, SMALL_RUNS);

    const downWire = cmd(1) + ack(0) + dataPacketsWireBytes(template.length, packet) + cmd(3) + ack(0);
    const down = await time(SMALL_RUNS, async () => {
      await d.downChar(2, template);
      await d.store(2, 199);
    });
    record(out, 'r30x DownChar+Store', baud, down, downWire, true, SMALL_RUNS);

    const imageRuns = baud >= 57600 ? RUNS : 1;
    const imgWire = cmd(0) + ack(0) + dataPacketsWireBytes(IMAGE_BYTES, packet);
    const up = await time(imageRuns, () => d.upImage());
    record(out, 'r30x UpImage', baud, up, imgWire, true, imageRuns);

    const searchWire = cmd(5) + ack(4);
    let hit: unknown;
    const search = await time(SMALL_RUNS * 2, async () => (hit = await d.search(1, 0, params.capacity, { hiSpeed: true })));
    if (!hit) throw new Error('bench search found nothing');
    record(out, 'r30x HiSpeedSearch', baud, search, searchWire, false, SMALL_RUNS * 2);
  } finally {
    await host.close();
    await sim.close();
    await pair.close();
  }
}

async function benchGt521(baud: number, out: Transfer[]): Promise<void> {
  const { pair, device, host } = await pairAt(baud);
  const sim = new Gt521Simulator({ baud, pace: true, images: syntheticImages.finger });
  await sim.attach(device);
  await host.open();
  const d = new Gt521Driver(host, { baud, timeoutMs: 1000 });
  try {
    await d.open();
    sim.enrollDirect(0, 4242);
    const data = (n: number) => 4 + n + 2;
    const tplWire = 2 * GT_PACKET + data(GT_TEMPLATE_SIZE);
    record(out, 'gt521 GetTemplate', baud, await time(SMALL_RUNS, () => d.getTemplate(0)), tplWire, true, SMALL_RUNS);
    sim.present(4242);
    const rawRuns = baud >= 38400 ? RUNS : 1;
    record(out, 'gt521 GetRawImage', baud, await time(rawRuns, () => d.getRawImage()), 2 * GT_PACKET + data(GT_RAW_SIZE), true, rawRuns);
    await d.cmosLed(true);
    await d.captureFinger(false);
    const imgRuns = baud >= 57600 ? RUNS : 1;
    record(out, 'gt521 GetImage', baud, await time(imgRuns, () => d.getImage()), 2 * GT_PACKET + data(GT_IMAGE_SIZE), true, imgRuns);
  } finally {
    d.detach?.();
    await host.close();
    await sim.close();
    await pair.close();
  }
}

async function benchIris(out: Transfer[]): Promise<void> {
  const { scanner, simulator } = await createSimulatedScanner('iris-hid', { images: syntheticImages, pacing: true });
  await scanner.open();
  try {
    simulator.present(7);
    const wire = resultWireBytes(640, 480);
    const reports = Math.ceil(wire / CHUNK_PAYLOAD);
    const floor = reports * simulator.reportIntervalMs;
    const ms = await time(RUNS, () =>
      (scanner as IrisHidScanner).driver.capture({ kind: IrisImageKind.Vga, width: 640, height: 480, timeoutMs: 5000, minQuality: 0 }),
    );
    record(out, 'iris-hid capture 640x480', null, ms, wire, true, RUNS, floor);
  } finally {
    await scanner.close();
  }
}

async function main(): Promise<void> {
  const transfers: Transfer[] = [];
  const t0 = performance.now();
  const loadBefore = loadavg();
  for (const baud of BAUDS) {
    await benchR30x(baud, transfers);
    await benchGt521(baud, transfers);
  }
  if (!args.includes('--no-iris')) await benchIris(transfers);
  const bulk = transfers.filter((t) => t.bulk);
  const result = {
    benchmark: 'drivers',
    floor: 'bits on the wire (command, answer and data packets, 10 bits a byte) ÷ baud',
    transfers,
    worstRatio: Math.max(...bulk.map((t) => t.ratio)),
    worstRatioAll: Math.max(...transfers.map((t) => t.ratio)),
    worstMinRatio: Math.max(...bulk.map((t) => t.minRatio)),
    target: 1.15,
    load: { before: loadBefore.map((x) => round(x, 2)), after: loadavg().map((x) => round(x, 2)), cpus: cpus().length },
    seconds: round((performance.now() - t0) / 1000),
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `worst bulk ratio ×${result.worstRatio} (target ≤ ×${result.target}); worst overall ×${result.worstRatioAll}; load ${result.load.after.join(' ')}\n`,
    );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:drivers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
