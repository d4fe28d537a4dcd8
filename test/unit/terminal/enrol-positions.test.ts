// Tests: src/terminal/enroller.ts (enrolPositions: which fingers an enrolment of several takes; the named
// ones first, the usual order after, each finger once, fingers only).
import { describe, expect, it } from 'vitest';
import { enrolPositions, FINGER_POSITIONS, MAX_FINGERS } from '../../../src/terminal/enroller.js';

describe('enrolPositions', () => {
  it('one finger by default, the named ones first, then the usual order without them', () => {
    expect(enrolPositions('finger', ['right-index'])).toEqual(['right-index']);
    expect(enrolPositions('finger', ['right-index'], 2)).toEqual(['right-index', 'right-middle']);
    expect(enrolPositions('finger', ['right-middle'], 3)).toEqual(['right-middle', 'right-index', 'left-index']);
    expect(enrolPositions('finger', ['left-thumb', 'right-index'])).toEqual(['left-thumb', 'right-index']);
    expect(enrolPositions('finger', ['right-index'], MAX_FINGERS)).toEqual([...FINGER_POSITIONS]);
  });

  it('refuses a finger named twice, more names than fingers, and a count out of range, with ENROLL_BAD_FINGERS', () => {
    expect(() => enrolPositions('finger', ['right-index', 'right-index'])).toThrow(/finger right-index is named twice/);
    expect(() => enrolPositions('finger', ['right-index', 'left-index'], 1)).toThrow(/2 positions named for 1 finger/);
    expect(() => enrolPositions('finger', ['right-index'], 0)).toThrow(/1 to 10 fingers, not 0/);
    expect(() => enrolPositions('finger', ['right-index'], 11)).toThrow(/1 to 10 fingers, not 11/);
    expect(() => enrolPositions('finger', ['a', 'a'])).toThrow(expect.objectContaining({ code: 'ENROLL_BAD_FINGERS' }));
  });

  it('an eye or a badge is one position', () => {
    expect(enrolPositions('iris', ['left'])).toEqual(['left']);
    expect(enrolPositions('badge', ['badge'], 1)).toEqual(['badge']);
    expect(() => enrolPositions('iris', ['left', 'right'])).toThrow(/one eye is enrolled at a time/);
    expect(() => enrolPositions('badge', ['badge'], 2)).toThrow(/one badge is enrolled at a time/);
  });
});
