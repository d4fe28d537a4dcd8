// The recognizer over in-memory engines (engines.fixture.ts) and an in-memory fingerprint module
// (scanner.fixture.ts): which path answers, in which order, and what a missing engine means.
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/core/errors.js';
import type { BadgeRead } from '../../../drivers/scanner.js';
import { Recognizer, type RecognizedScanner } from '../../../src/terminal/recognizer.js';
import { fakeEngines } from './engines.fixture.js';
import { FakeScanner } from './scanner.fixture.js';

function module(finger: number, slots: Record<number, number> = {}): FakeScanner {
  const scanner = new FakeScanner();
  for (const [slot, f] of Object.entries(slots)) scanner.slots.set(Number(slot), f);
  scanner.present = finger;
  return scanner;
}

/** A card reader holding one read, as the recognizer asks it. */
function reader(read: BadgeRead): RecognizedScanner {
  return {
    modality: 'badge',
    capabilities: { image: false, moduleSearch: false, moduleEnroll: false, feedback: false, credential: true },
    captureImage: async () => {
      throw new Error('a card reader has no image');
    },
    searchOnModule: async () => null,
    readCredential: async () => read,
  };
}

describe('the recognizer', () => {
  it("asks the module's own search first; a hit whose slot maps to a person is the answer, no image is taken", async () => {
    const engines = fakeEngines({ gallery: { 7: 'E-HOST' }, slots: { 1: 'E-MODULE' } });
    const r = await new Recognizer(engines).recognize(module(7, { 1: 7 }), 'fake');
    expect(r).toMatchObject({
      employeeCode: 'E-MODULE',
      modality: 'finger',
      decision: 'accept',
      path: 'module',
      score: 120,
      templateId: null,
    });
    expect(r!.ms).toBeGreaterThanOrEqual(0);
    expect(engines.requests).toEqual([]);
  });

  it('falls back to the image on a miss, on a slot no one holds here, and on a module score below the minimum', async () => {
    const engines = fakeEngines({ gallery: { 9: 'E-HOST', 7: 'E-SEVEN' }, slots: { 1: 'E-MODULE' } });
    const recognizer = new Recognizer(engines);
    expect(await recognizer.recognize(module(9), 'fake')).toMatchObject({ employeeCode: 'E-HOST', path: 'host', score: 55 });
    expect(await recognizer.recognize(module(7, { 2: 7 }), 'fake')).toMatchObject({ employeeCode: 'E-SEVEN', path: 'host' });
    const strict = new Recognizer(engines, { moduleMinScore: 200 });
    expect(await strict.recognize(module(7, { 1: 7 }), 'fake')).toMatchObject({ employeeCode: 'E-SEVEN', path: 'host' });
    expect(engines.requests.map((q) => q.modality)).toEqual(['finger', 'finger', 'finger']);
    // An unknown finger is a reject with the best score, not an error.
    expect(await recognizer.recognize(module(4), 'fake')).toMatchObject({ employeeCode: null, decision: 'reject', score: 3 });
  });

  it("the embedding slot answers first for its modality; its reject falls back to the standard template; another modality's images skip it", async () => {
    const engines = fakeEngines({ gallery: { 9: 'E-STD', 4: 'E-STD4' }, embedding: { source: 'finger', gallery: { 9: 'E-EMB' } } });
    const recognizer = new Recognizer(engines);
    const image = (p: number) => ({ width: 1, height: 1, pixels: Uint8Array.of(p), sourceBitsPerPixel: 8, dpi: 500, quality: null });
    // An embedding hit is reported as the finger it read.
    expect(await recognizer.image('finger', image(9))).toMatchObject({ employeeCode: 'E-EMB', modality: 'finger', decision: 'accept' });
    expect(await recognizer.image('finger', image(4))).toMatchObject({ employeeCode: 'E-STD4', modality: 'finger' });
    expect(engines.requests.map((q) => q.modality)).toEqual(['embedding', 'embedding', 'finger']);
    engines.requests.length = 0;
    expect(await recognizer.image('iris', image(9))).toMatchObject({ employeeCode: 'E-STD', modality: 'iris' });
    expect(engines.requests.map((q) => q.modality)).toEqual(['iris']);
  });

  it('without an extractor an image is a reject (the person is told "unknown"), unless the embedding slot knows it', async () => {
    const engines = fakeEngines({ gallery: { 9: 'E-STD' }, embedding: { source: 'finger', gallery: { 5: 'E-EMB' } }, noExtractor: true });
    const recognizer = new Recognizer(engines);
    const image = (p: number) => ({ width: 1, height: 1, pixels: Uint8Array.of(p), sourceBitsPerPixel: 8, dpi: 500, quality: null });
    expect(await recognizer.image('finger', image(9))).toEqual({
      employeeCode: null,
      modality: 'finger',
      score: null,
      decision: 'reject',
      path: 'host',
      templateId: null,
      ms: 0,
    });
    expect(await recognizer.image('finger', image(5))).toMatchObject({ employeeCode: 'E-EMB', decision: 'accept' });
  });

  it("a card reader's read is looked up among the badges; without badge credentials here it is a reject, nothing asked", async () => {
    const engines = fakeEngines({ badges: { '24:1001': 'E-ADA' } });
    const recognizer = new Recognizer(engines);
    expect(await recognizer.recognize(reader({ credential: '24:1001', format: 'wiegand26' }), 'sim:badge')).toMatchObject({
      employeeCode: 'E-ADA',
      modality: 'badge',
      decision: 'accept',
      path: 'host',
    });
    expect(await recognizer.badge({ credential: '24:9', format: 'wiegand26' })).toMatchObject({ employeeCode: null, decision: 'reject' });
    expect(engines.requests).toEqual([
      { modality: 'badge', template: { credential: '24:1001' } },
      { modality: 'badge', template: { credential: '24:9' } },
    ]);
    const none = fakeEngines({});
    expect(await new Recognizer(none).badge({ credential: '24:1001', format: 'wiegand26' })).toMatchObject({
      employeeCode: null,
      modality: 'badge',
      decision: 'reject',
    });
    expect(none.requests).toEqual([]);
  });

  it('a capture that fails is thrown to the worker (it asks to try again); a scanner with nothing to give is null', async () => {
    const scanner = module(9);
    scanner.failImage = true;
    await expect(new Recognizer(fakeEngines({ gallery: { 9: 'E9' } })).recognize(scanner, 'fake')).rejects.toBeInstanceOf(AgentError);
    const blind: RecognizedScanner = {
      ...reader({ credential: '24:1', format: 'x' }),
      modality: 'finger',
      capabilities: { image: false, moduleSearch: false, moduleEnroll: false, feedback: false },
    };
    expect(await new Recognizer(fakeEngines({ gallery: { 9: 'E9' } })).recognize(blind, 'fake')).toBeNull();
  });
});
