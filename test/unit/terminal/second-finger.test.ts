// The second-finger policy (src/terminal/second-finger.ts) and the identifier's decision on two
// fingers among the close persons (Identifier.identifyAmong), with real synthetic templates, a
// real SQLite template cache and the real finger matcher; the scanner is a script of presses.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CapturedImage, Feedback } from '../../../drivers/scanner.js';
import { parseConfig } from '../../../src/config/config.js';
import { encodeIso19794_2 } from '../../../src/biometrics/finger/iso19794-2.js';
import { FingerMatcher } from '../../../src/biometrics/matchers/finger-matcher.js';
import type { SqliteDatabase } from '../../../src/core/sqlite.js';
import { openAgentDatabase } from '../../../src/store/agent-db.js';
import { TemplateCache } from '../../../src/store/template-cache.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../src/synthetic/finger.js';
import { Identifier } from '../../../src/terminal/identifier.js';
import { runSecondFinger, secondFingerPolicy, secondFingerWanted, type SecondFingerStep } from '../../../src/terminal/second-finger.js';

const fingerBytes = (finger: number, imp: number) => encodeIso19794_2(impressionTemplate(impression(syntheticFinger(finger), imp)));
const biometrics = { fingerThreshold: 40, irisThreshold: 0.32, irisShiftRange: 8 };

describe('the policy', () => {
  it('is on by default with 10 s and the finger threshold; off and the time are configurable and validated', () => {
    expect(secondFingerPolicy(parseConfig({}))).toEqual({ enabled: true, timeoutMs: 10_000, sameFingerScore: 40 });
    const off = parseConfig({ policy: { secondFinger: 'off', secondFingerTimeoutSec: 4.5 }, biometrics: { fingerThreshold: 44 } });
    expect(secondFingerPolicy(off)).toEqual({ enabled: false, timeoutMs: 4500, sameFingerScore: 44 });
    expect(() => parseConfig({ policy: { secondFinger: 'maybe' } })).toThrow(/policy\.secondFinger/);
    expect(() => parseConfig({ policy: { secondFingerTimeoutSec: 0 } })).toThrow(/policy\.secondFingerTimeoutSec/);
    expect(() => parseConfig({ policy: { secondFingerTimeoutSec: 600 } })).toThrow(/policy\.secondFingerTimeoutSec/);
  });

  it('asks only for a finger reject that names the persons to tell apart, and only when on', () => {
    const on = { enabled: true, timeoutMs: 1000, sameFingerScore: 40 };
    const base = { score: 50, path: 'host' as const, templateId: null, ms: 1 };
    const close = { ...base, employeeCode: null, modality: 'finger' as const, decision: 'reject' as const, between: ['A', 'B'] };
    expect(secondFingerWanted(close, on)).toEqual(['A', 'B']);
    expect(secondFingerWanted(close, { ...on, enabled: false })).toBeNull();
    expect(secondFingerWanted({ ...close, between: undefined }, on)).toBeNull();
    expect(secondFingerWanted({ ...close, modality: 'iris' }, on)).toBeNull();
    expect(secondFingerWanted({ ...close, decision: 'accept', employeeCode: 'A' }, on)).toBeNull();
    expect(secondFingerWanted(null, on)).toBeNull();
  });
});

/** A scanner that answers presence from a script: each call takes the next entry (the last repeats). */
function scriptedScanner(presence: boolean[]) {
  let i = 0;
  const captured: number[] = [];
  return {
    captured,
    scanner: {
      async waitForPresence({ timeoutMs }: { timeoutMs?: number }) {
        const v = presence[Math.min(i++, presence.length - 1)]!;
        // Nothing there: the wait lasts a little (not the whole timeout, to keep the test quick).
        if (!v) await new Promise((r) => setTimeout(r, Math.min(timeoutMs ?? 0, 20)));
        return v;
      },
      async captureImage() {
        captured.push(i);
        return { width: 1, height: 1, pixels: new Uint8Array(1) } as unknown as CapturedImage;
      },
    },
  };
}

describe('runSecondFinger', () => {
  let dir: string;
  let db: SqliteDatabase;
  let cache: TemplateCache;
  let identifier: Identifier;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'second-finger-'));
    db = await openAgentDatabase(dir);
    cache = await TemplateCache.open(db, { key: randomBytes(32) });
    const t = (employeeCode: string, position: string, finger: number, imp: number) => ({
      employeeCode,
      modality: 'finger' as const,
      position,
      format: 'iso19794-2' as const,
      data: fingerBytes(finger, imp),
    });
    // A enrolled two fingers; B's right-index is A's right-index (two people close); C, D others.
    await cache.addTemplates([
      t('A', 'right-index', 101, 1),
      t('A', 'right-index', 101, 2),
      t('A', 'right-middle', 102, 1),
      t('A', 'right-middle', 102, 2),
      t('B', 'right-index', 101, 1),
      t('B', 'right-index', 101, 2),
      t('C', 'right-index', 103, 1),
      t('D', 'right-index', 104, 1),
    ]);
    identifier = await Identifier.build(cache, { biometrics, matchers: [new FingerMatcher(40, { secondFinger: true })] });
  });
  afterEach(async () => {
    await identifier.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function step(presence: boolean[], second: Uint8Array, between: string[]) {
    const s = scriptedScanner(presence);
    const feedback: Feedback[] = [];
    const events: Array<Record<string, unknown>> = [];
    const among: string[][] = [];
    const args: SecondFingerStep = {
      scanner: s.scanner,
      first: fingerBytes(101, 5),
      between,
      timeoutMs: 600,
      sameFingerScore: 40,
      extract: async () => second,
      identifyAmong: (templates, who) => {
        among.push([...who]);
        return identifier.identifyAmong({ modality: 'finger', templates, among: who });
      },
      feedback: async (k) => void feedback.push(k),
      progress: (e) => events.push(e),
    };
    return { args, feedback, events, among, captured: s.captured };
  }

  it('the first finger leaves A and B close: the identifier names them instead of punching either', async () => {
    const r = await identifier.identify({ modality: 'finger', template: fingerBytes(101, 5) });
    expect(r.decision).toBe('reject');
    expect(r.employeeCode).toBeNull();
    expect([...(r.between ?? [])].sort()).toEqual(['A', 'B']);
    // A's other finger alone is A (either finger finds the person).
    const other = await identifier.identify({ modality: 'finger', template: fingerBytes(102, 5) });
    expect(other).toMatchObject({ decision: 'accept', employeeCode: 'A' });
    expect(other.between).toBeUndefined();
  });

  it('another finger tells them apart: the decision on both, among A and B only, is A', async () => {
    const s = step([true, false, true], fingerBytes(102, 6), ['A', 'B']);
    const out = await runSecondFinger(s.args);
    expect(out.result).toBe('accept');
    expect(out.identification).toMatchObject({ decision: 'accept', employeeCode: 'A', modality: 'finger' });
    expect(s.among).toEqual([['A', 'B']]);
    expect(s.feedback[0]).toBe('enroll-step');
    expect(s.events[0]).toMatchObject({ step: 'second-finger', between: ['A', 'B'] });
    expect(String(s.events[0]!.message)).toMatch(/lift it and place another finger within 1 s/);
  });

  it('restricted to the candidates: a second finger of someone else never makes that someone the answer', async () => {
    // C's finger with the first: C is not among the candidates, and A and B stay as close as before.
    const s = step([false, true], fingerBytes(103, 6), ['A', 'B']);
    const out = await runSecondFinger(s.args);
    expect(out.result).toBe('ambiguous');
    expect(out.identification?.employeeCode ?? null).toBeNull();
    expect(out.detail).toMatch(/still do not tell the close people apart: nothing punched/);
  });

  it('nothing placed in time is a reject saying so', async () => {
    const s = step([false], fingerBytes(102, 6), ['A', 'B']);
    const out = await runSecondFinger(s.args);
    expect(out).toMatchObject({ result: 'timeout', identification: null });
    expect(out.detail).toMatch(/no other finger within 1 s/);
    expect(s.captured).toHaveLength(0);
    expect(s.among).toHaveLength(0);
  });

  it('a first finger that never lifts is no second finger', async () => {
    const s = step([true], fingerBytes(102, 6), ['A', 'B']);
    const out = await runSecondFinger(s.args);
    expect(out.result).toBe('timeout');
    expect(out.detail).toMatch(/stayed on the sensor/);
    expect(s.captured).toHaveLength(0);
  });

  it('the same finger again is asked again (it tells nothing new), then the time runs out', async () => {
    const s = step([false, true, false], fingerBytes(101, 7), ['A', 'B']);
    const out = await runSecondFinger(s.args);
    expect(out.result).toBe('timeout');
    expect(s.captured.length).toBeGreaterThanOrEqual(1);
    expect(s.among).toHaveLength(0);
    expect(s.feedback).toContain('try-again');
    expect(s.events.some((e) => /same finger again: lift it and place a different finger/.test(String(e.message)))).toBe(true);
  });

  it('an unusable second read is a reject with its reason', async () => {
    const s = step([false, true], fingerBytes(102, 6), ['A', 'B']);
    s.args.extract = async () => {
      throw new Error('no ridges');
    };
    const out = await runSecondFinger(s.args);
    expect(out.result).toBe('unusable');
    expect(out.detail).toMatch(/could not be read .*no ridges.*nothing punched/);
  });
});
