// Fuzzing in the suite: random, valid and mutated frames through every parser and decoder that
// reads bytes from outside (test/helpers/fuzz-codecs.ts). Each run feeds a few frames into a fresh
// decoder (stream parsers keep state between frames); a refusal is an AgentError, anything else
// thrown is a crash, and a decoder keeps a bounded number of bytes. A few hundred runs each here;
// `npm run bench:fuzz` feeds a million frames per codec.
//
// Tests: every decoder of outside bytes in src/ and drivers/, listed in test/helpers/fuzz-codecs.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMutations, feedOne, frameArb, FrameSource, FUZZ_CODECS, type FuzzCodec } from '../helpers/fuzz-codecs.js';

async function run(codec: FuzzCodec, frames: Array<{ bytes: Uint8Array; fix: boolean }>): Promise<unknown> {
  const target = codec.create();
  try {
    for (const f of frames) {
      const crash = await feedOne(codec, target, f.fix && target.fixup ? target.fixup(f.bytes) : f.bytes);
      if (crash) return crash;
    }
  } finally {
    await target.close?.();
  }
  return null;
}

describe('fuzzing every parser and decoder', () => {
  for (const codec of FUZZ_CODECS) {
    it(`${codec.name}: random and mutated frames give AgentErrors only, in bounded memory`, async () => {
      const before = process.memoryUsage();
      await fc.assert(
        fc.asyncProperty(fc.array(frameArb(codec), { minLength: 1, maxLength: 8 }), async (frames) => {
          const crash = await run(codec, frames);
          expect(crash, String((crash as Error | null)?.stack ?? crash)).toBeNull();
        }),
        { numRuns: 200 },
      );
      const after = process.memoryUsage();
      expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(64 * 1024 * 1024);
    });
  }

  it('the fast source for the benchmark makes the same kinds of frames, deterministically', () => {
    const codec = FUZZ_CODECS[0]!;
    const a = new FrameSource(codec, 7);
    const b = new FrameSource(codec, 7);
    const frames = Array.from({ length: 200 }, () => a.next());
    expect(frames.map((f) => Buffer.from(f.bytes).toString('hex'))).toEqual(
      Array.from({ length: 200 }, () => Buffer.from(b.next().bytes).toString('hex')),
    );
    expect(frames.some((f) => f.fix)).toBe(true);
    expect(new Set(frames.map((f) => f.bytes.length)).size).toBeGreaterThan(20);
  });

  it('mutations write the values length fields break on, and cut, insert, delete and repeat', () => {
    const base = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...applyMutations(base, [{ op: 'interesting', at: 2, pick: 14 * 2 + 12 }])]).toEqual([1, 2, 0xf0, 0xff, 0xff, 0xff, 7, 8]); // 0xFFFFFFF0, 4 bytes, LE
    expect([...applyMutations(base, [{ op: 'cut', at: 3 }])]).toEqual([1, 2, 3]);
    expect([...applyMutations(base, [{ op: 'insert', at: 1, bytes: Uint8Array.of(9) }])]).toEqual([1, 9, 2, 3, 4, 5, 6, 7, 8]);
    expect([...applyMutations(base, [{ op: 'delete', at: 6, n: 5 }])]).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...applyMutations(base, [{ op: 'repeat', at: 0, n: 2 }])]).toEqual([1, 2, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...applyMutations(base, [{ op: 'flip', at: 9 + 0, bit: 0 }])]).toEqual([0, 2, 3, 4, 5, 6, 7, 8]); // positions wrap
  });
});
