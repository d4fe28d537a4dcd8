/**
 * Benchmark: a million frames through every parser and decoder that reads bytes from outside
 * (test/helpers/fuzz-codecs.ts): a sixth random bytes, a sixth valid frames, the rest valid frames
 * with one to six mutations (half of them with their checksum or signature made right again).
 * Frames go in runs of eight into one decoder (stream parsers keep state), then a fresh one.
 * A crash is anything thrown that is not an AgentError, or a decoder keeping more bytes than its
 * bound; the first few are printed with the frame that caused them.
 *
 *   npm run bench:fuzz -- --json              one JSON object on stdout
 *   --frames N                                frames per codec (default 1,000,000)
 *   --codec NAME                              only this codec (repeatable)
 *   --seed S                                  the generator's seed (default 12)
 *
 * Floor: 0 crashes in every codec (`crashes`, `withinFloor`).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { muteLogging } from '../../src/core/logger.js';
import { feedOne, FrameSource, FUZZ_CODECS, type FuzzCodec } from '../helpers/fuzz-codecs.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const option = (name: string) => args.flatMap((a, i) => (a === name && args[i + 1] !== undefined ? [args[i + 1]!] : []));
const frames = Number(option('--frames')[0] ?? 1_000_000);
const seed = Number(option('--seed')[0] ?? 12);
const only = option('--codec');
const RUN = 8;

muteLogging(); // the iris driver logs what it drops at debug/warn; a million lines is not a benchmark

interface CodecResult {
  codec: string;
  frames: number;
  framesPerSec: number;
  crashes: number;
  examples: Array<{ frame: string; error: string }>;
  seconds: number;
}

async function fuzz(codec: FuzzCodec): Promise<CodecResult> {
  const source = new FrameSource(codec, seed);
  const examples: CodecResult['examples'] = [];
  let crashes = 0;
  let target = codec.create();
  const started = performance.now();
  for (let i = 0; i < frames; i++) {
    if (i > 0 && i % RUN === 0) {
      await closeCounting(target);
      target = codec.create();
    }
    const f = source.next();
    const bytes = f.fix && target.fixup ? target.fixup(f.bytes) : f.bytes;
    const crash = await feedOne(codec, target, bytes);
    if (crash) note(crash, bytes);
  }
  await closeCounting(target);
  const seconds = (performance.now() - started) / 1000;
  return {
    codec: codec.name,
    frames,
    framesPerSec: Math.round(frames / seconds),
    crashes,
    examples,
    seconds: Math.round(seconds * 10) / 10,
  };

  function note(crash: unknown, bytes: Uint8Array | null): void {
    crashes++;
    if (examples.length < 3)
      examples.push({
        frame: bytes ? Buffer.from(bytes).toString('hex').slice(0, 256) : '(closing)',
        error: String((crash as Error)?.stack ?? crash)
          .split('\n')
          .slice(0, 4)
          .join(' | '),
      });
  }
  async function closeCounting(t: typeof target): Promise<void> {
    try {
      await t.close?.();
    } catch (err) {
      note(err, null);
    }
  }
}

const codecs = FUZZ_CODECS.filter((c) => only.length === 0 || only.includes(c.name));
const results: CodecResult[] = [];
for (const codec of codecs) {
  const r = await fuzz(codec);
  results.push(r);
  if (!json)
    process.stdout.write(
      `${r.codec.padEnd(16)} ${r.frames} frames  ${String(r.framesPerSec).padStart(8)} frames/s  ${r.crashes} crash(es)${r.examples.length ? `\n  e.g. ${r.examples[0]!.error}\n  frame ${r.examples[0]!.frame}` : ''}\n`,
    );
}
const crashes = results.reduce((n, r) => n + r.crashes, 0);
const out = {
  bench: 'fuzz',
  machine: { cpus: cpus().length, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
  seed,
  framesPerCodec: frames,
  codecs: results,
  crashes,
  floor: 0,
  withinFloor: crashes === 0,
};
if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
else process.stdout.write(`${crashes} crash(es) in all (floor 0)\n`);
