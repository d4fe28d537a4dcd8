// The scanner worker with a badge reader: the real serial badge reader on its in-process
// simulator (drivers/badge), the real recognizer and punch step over in-memory engines and
// policy (engines.fixture.ts). A card is
// identified by its credential and punched with source badge, the next card is read without a
// "lift", an unknown card or a failed read gives feedback on the terminal's other scanners (the
// reader has no light), and the policy's awaiting / not-accepted answers are told apart.
//
// Tests: src/terminal/scanner-worker.ts with a badge reader (drivers/badge/serial-reader.ts); scanner-worker.test.ts
// has the fingerprint module.
import { afterEach, describe, expect, it } from 'vitest';
import type { Feedback } from '../../../drivers/scanner.js';
import { createSimulatedScanner } from '../../../drivers/simulated.js';
import { fallbackImages } from '../../../drivers/simulator/images.js';
import type { BadgeSerialSimulator } from '../../../drivers/badge/serial-simulator.js';
import { ScannerWorker, type CaptureOutcome } from '../../../src/terminal/scanner-worker.js';
import { PunchStep } from '../../../src/terminal/punch-step.js';
import type { PresentResult } from '../../../src/terminal/punch-policy.js';
import { Recognizer } from '../../../src/terminal/recognizer.js';
import { fakeEngines, fakePolicy, punchedIn } from './engines.fixture.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

async function setup(enrolled: Record<string, string>, punchAnswer: (code: string) => PresentResult = () => punchedIn()) {
  const sim = await createSimulatedScanner('badge-serial', { images: fallbackImages, format: 'wiegand26' });
  const simulator = sim.simulator as BadgeSerialSimulator;
  const engines = fakeEngines({ badges: enrolled });
  const policy = fakePolicy((p) => punchAnswer(p.employeeCode));
  const elsewhere: Feedback[] = [];
  const worker = new ScannerWorker({
    key: 'sim:badge-serial',
    open: async () => sim.scanner,
    recognizer: new Recognizer(engines),
    punch: new PunchStep(policy),
    fallbackFeedback: async (kind) => {
      elsewhere.push(kind);
    },
    cooldownMs: 10,
    liftTimeoutMs: 5000,
  });
  worker.start();
  stops.push(async () => {
    await worker.stop();
    await simulator.close();
  });
  const tap = async (card: number): Promise<CaptureOutcome> => {
    const next = new Promise<CaptureOutcome>((r) => worker.once('capture', r));
    simulator.present(card);
    simulator.lift();
    return next;
  };
  // The badge reads the identifier was asked about, and the presentations the policy got (live).
  return { worker, simulator, reads: engines.requests, punches: policy.presented, elsewhere, tap };
}

describe('scanner worker with a badge reader', () => {
  it('punches an enrolled card with source badge, and reads the next card at once (nothing to lift)', async () => {
    const { reads, punches, elsewhere, tap } = await setup({ '24:1001': 'E-ADA', '24:1002': 'E-ALAN' });
    expect(await tap(1001)).toMatchObject({ result: 'punched', employeeCode: 'E-ADA', path: 'host' });
    const t0 = performance.now();
    expect(await tap(1002)).toMatchObject({ result: 'punched', employeeCode: 'E-ALAN' });
    // Well under the 5 s a finger's lift may take: a reader has nothing to lift.
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(punches).toMatchObject([
      { employeeCode: 'E-ADA', source: 'badge' },
      { employeeCode: 'E-ALAN', source: 'badge' },
    ]);
    expect(reads.map((r) => (r.template as { credential: string }).credential)).toEqual(['24:1001', '24:1002']);
    expect(elsewhere).toEqual(['accepted', 'accepted']);
  });

  it('refuses an unknown card with feedback and no punch, and asks again after a failed read', async () => {
    const { simulator, punches, elsewhere, tap } = await setup({ '24:1001': 'E-ADA' });
    expect(await tap(999)).toMatchObject({ result: 'unknown', employeeCode: null, detail: 'badge not enrolled' });
    simulator.setFault('bad-checksum', 1);
    const failed = await tap(1001);
    expect(failed.result).toBe('try-again');
    expect(failed.detail).toContain('DRIVER_CHECKSUM');
    expect(punches).toEqual([]);
    expect(elsewhere).toEqual(['unknown', 'try-again']);
  });

  it('shows a badge awaiting its second factor as a step, and a badge the policy does not take as try again', async () => {
    const answers: Record<string, PresentResult> = {
      'E-ADA': { recorded: false, reason: 'awaiting', awaiting: 'biometric', withinSec: 15 },
      'E-ALAN': { recorded: false, reason: 'not-accepted', detail: 'this terminal takes a finger or an eye, not a badge' },
    };
    const { elsewhere, tap } = await setup({ '24:1': 'E-ADA', '24:2': 'E-ALAN' }, (code) => answers[code]!);
    expect(await tap(1)).toMatchObject({ result: 'awaiting', employeeCode: 'E-ADA', detail: expect.stringContaining('15 s') });
    expect(await tap(2)).toMatchObject({
      result: 'denied',
      employeeCode: 'E-ALAN',
      detail: 'this terminal takes a finger or an eye, not a badge',
    });
    expect(elsewhere).toEqual(['enroll-step', 'try-again']);
  });
});
