import { describe, expect, it } from 'vitest';
import { DEFAULT_FINGER_DECISION } from '../../../../src/biometrics/finger/decision.js';
import { FingerIndex } from '../../../../src/biometrics/finger/index.js';
import {
  capturesAgree,
  identifyAmong,
  identifyPerson,
  secondFingerBetween,
  type PersonCandidate,
  type PersonGallery,
} from '../../../../src/biometrics/finger/identify-person.js';
import { PersonDirectory } from '../../../../src/biometrics/finger/person-directory.js';
import { impression, impressionTemplate, syntheticFinger } from '../../../../src/synthetic/finger.js';

/** 40 persons, two fingers each (right-index, left-index), one capture per finger enrolled. */
const PERSONS = 40;
const seedOf = (person: number, finger: number) => 51_000 + person * 2 + finger;
const capture = (person: number, finger: number, k: number) => impressionTemplate(impression(syntheticFinger(seedOf(person, finger)), k));
const POSITIONS = ['right-index', 'left-index'];

function gallery(): { g: PersonGallery; index: FingerIndex; directory: PersonDirectory } {
  const index = new FingerIndex();
  const directory = new PersonDirectory();
  for (let p = 0; p < PERSONS; p++)
    for (let f = 0; f < 2; f++) {
      const id = `t-${p}-${f}`;
      index.add(id, capture(p, f, 0));
      directory.add(id, { person: `P${p}`, position: POSITIONS[f]! });
    }
  return { g: { index, ownerOf: (id) => directory.ownerOf(id), templatesOf: (p) => directory.templatesOf(p) }, index, directory };
}

/** Runs `check` while P0's right index is also on file under P1 (a mix-up at enrollment, or twins' worth of likeness). */
function withSharedFinger(index: FingerIndex, directory: PersonDirectory, check: () => void): void {
  index.add('dup', capture(0, 0, 0));
  directory.add('dup', { person: 'P1', position: 'right-index' });
  try {
    check();
  } finally {
    index.remove('dup');
    directory.remove('dup');
  }
}

describe('identifyPerson', () => {
  const { g, index, directory } = gallery();

  it('one finger: accepts the person, names the finger it matched, and ranks persons, not templates', () => {
    const r = identifyPerson(capture(7, 1, 1), g, DEFAULT_FINGER_DECISION);
    expect(r.decision).toBe('accept');
    expect(r.person).toBe('P7');
    expect(r.templateId).toBe('t-7-1');
    expect(r.n).toBe(PERSONS * 2);
    expect(r.probes).toBe(1);
    expect(r.between).toEqual([]);
    const persons = r.candidates.map((c) => c.person);
    expect(new Set(persons).size).toBe(persons.length);
    for (let k = 1; k < r.candidates.length; k++) expect(r.candidates[k - 1]!.score).toBeGreaterThanOrEqual(r.candidates[k]!.score);
  });

  it('a stranger is taken for nobody', () => {
    const r = identifyPerson(impressionTemplate(impression(syntheticFinger(999_001), 1)), g, DEFAULT_FINGER_DECISION);
    expect(r.decision).not.toBe('accept');
    expect(r.person).toBeNull();
    expect(r.templateId).toBeNull();
  });

  it('two persons enrolled with the same finger: ambiguous between them, and their other finger settles it', () => {
    withSharedFinger(index, directory, () => {
      const one = identifyPerson(capture(0, 0, 1), g, DEFAULT_FINGER_DECISION);
      expect(one.decision).toBe('ask-second-finger');
      expect(one.person).toBeNull();
      expect([...one.between].sort()).toEqual(['P0', 'P1']);
      const two = identifyPerson([capture(0, 0, 1), capture(0, 1, 1)], g, DEFAULT_FINGER_DECISION);
      expect(two.decision).toBe('accept');
      expect(two.person).toBe('P0');
      expect(two.probes).toBe(2);
      expect(two.candidates[0]!.probes.map((p) => p.position)).toEqual(['right-index', 'left-index']);
      expect(two.candidates[0]!.score).toBeGreaterThan(one.candidates[0]!.score);
    });
  });

  it('the same finger presented twice counts once: the second presentation finds no other finger of the person', () => {
    const twice = identifyPerson([capture(3, 0, 1), capture(3, 0, 2)], g, DEFAULT_FINGER_DECISION);
    const best = twice.candidates.find((c) => c.person === 'P3')!;
    const positions = best.probes.map((p) => p.position);
    expect(positions.filter((p) => p === 'right-index').length).toBe(1);
    // the presentation not counted on the right index is scored against the left one: a chance score
    const other = best.probes.find((p) => p.position !== 'right-index')!;
    expect(other.score).toBeLessThan(DEFAULT_FINGER_DECISION.threshold);
    const genuine = best.probes.find((p) => p.position === 'right-index')!;
    expect(genuine.score).toBeGreaterThan(DEFAULT_FINGER_DECISION.threshold);
  });

  it('scores are normalised against the own candidate list of the search, never raised, and the mate is still accepted', () => {
    const big = new FingerIndex();
    const owners = new PersonDirectory();
    for (let p = 0; p < 300; p++) {
      big.add(`b-${p}`, impressionTemplate(impression(syntheticFinger(61_000 + p), 0)));
      owners.add(`b-${p}`, { person: `B${p}`, position: 'right-index' });
    }
    const bigGallery: PersonGallery = { index: big, ownerOf: (id) => owners.ownerOf(id) };
    const probe = impressionTemplate(impression(syntheticFinger(61_000 + 17), 1));
    const raw = new Map(big.search(probe).map((r) => [r.id, r.score]));
    const r = identifyPerson(probe, bigGallery, DEFAULT_FINGER_DECISION, { keep: 20 });
    expect(r.person).toBe('B17');
    for (const c of r.candidates) expect(c.score).toBeLessThanOrEqual(raw.get(c.probes[0]!.templateId!)! + 1e-9);
  });

  it('a template without an owner is left out, and no probe is an error', () => {
    index.add('orphan', capture(9, 0, 0));
    try {
      const r = identifyPerson(capture(9, 0, 1), g, DEFAULT_FINGER_DECISION);
      expect(r.person).toBe('P9');
      expect(r.candidates.flatMap((c) => c.probes.map((p) => p.templateId))).not.toContain('orphan');
    } finally {
      index.remove('orphan');
    }
    expect(() => identifyPerson([], g, DEFAULT_FINGER_DECISION)).toThrow(RangeError);
  });
});

describe('the second-finger step (identifyAmong)', () => {
  const { g, index, directory } = gallery();

  it('decides among the named persons only, each capture still normalised by its search in the whole gallery', () => {
    // P2's fingers, but only P5 and P6 may be named: the fusion finds nobody among them
    const wrong = identifyAmong([capture(2, 0, 1), capture(2, 1, 1)], g, ['P5', 'P6'], DEFAULT_FINGER_DECISION);
    expect(wrong.decision).toBe('reject');
    expect(wrong.candidates.map((c) => c.person).sort()).toEqual(['P5', 'P6']);
    const right = identifyAmong([capture(2, 0, 1), capture(2, 1, 1)], g, ['P2', 'P6'], DEFAULT_FINGER_DECISION);
    expect(right).toMatchObject({ decision: 'accept', person: 'P2', probes: 2 });
    expect(right.needed).toBeCloseTo(-10 * Math.log10(DEFAULT_FINGER_DECISION.fpir * DEFAULT_FINGER_DECISION.secondFingerShare!), 6);
  });

  it('the first finger asks for a second between the two close persons, and the second settles it on the daemon’s path', () => {
    withSharedFinger(index, directory, () => {
      const one = identifyPerson(capture(0, 0, 1), g, DEFAULT_FINGER_DECISION);
      expect(one.decision).toBe('ask-second-finger');
      const between = secondFingerBetween(one);
      expect([...between].sort()).toEqual(['P0', 'P1']);
      const two = identifyAmong([capture(0, 0, 1), capture(0, 1, 1)], g, between, DEFAULT_FINGER_DECISION);
      expect(two).toMatchObject({ decision: 'accept', person: 'P0' });
      // the same first finger, and P1's other finger second: P1
      const other = identifyAmong([capture(0, 0, 1), capture(1, 1, 1)], g, between, DEFAULT_FINGER_DECISION);
      expect(other).toMatchObject({ decision: 'accept', person: 'P1' });
      // a stranger's finger second: the second capture points to neither, so nobody
      const stranger = identifyAmong([capture(0, 0, 1), capture(20, 1, 1)], g, between, DEFAULT_FINGER_DECISION);
      expect(stranger.decision).toBe('reject');
      expect(stranger.person).toBeNull();
    });
  });
});

describe('capturesAgree', () => {
  const person = (name: string, fused: number, own: number[]): PersonCandidate => ({
    person: name,
    score: fused,
    probes: own.map((score) => ({ score, templateId: null, position: null })),
  });
  const floor = { ...DEFAULT_FINGER_DECISION, secondFingerFloor: 20 };

  it('the second capture must reach the floor for the fused best person and score no other person higher', () => {
    expect(capturesAgree([person('A', 60, [50, 30]), person('B', 50, [50, 10])], floor)).toBe(true);
    expect(capturesAgree([person('A', 60, [50, 15]), person('B', 50, [50, 10])], floor)).toBe(false);
    expect(capturesAgree([person('A', 60, [55, 25]), person('B', 50, [20, 30])], floor)).toBe(false);
  });

  it('one capture, or no floor in the policy, is no constraint', () => {
    expect(capturesAgree([person('A', 60, [60])], floor)).toBe(true);
    expect(capturesAgree([person('A', 60, [50, 0]), person('B', 50, [0, 50])], { ...floor, secondFingerFloor: undefined })).toBe(true);
    expect(capturesAgree([], floor)).toBe(true);
  });
});
