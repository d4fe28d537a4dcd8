import { describe, expect, it } from 'vitest';
import { extractFinger } from '../../../src/biometrics/extract/finger-pipeline.js';
import { compareFingerTemplates } from '../../../src/biometrics/finger/matcher.js';
import { DEMO_EMPLOYEES } from '../../../src/embedded/embedded.js';
import { renderFingerImage } from '../../../src/synthetic/finger-image.js';

describe('the demo people', () => {
  it('have fingers no impression of another is taken for (best impostor score far under the duplicate threshold of 40)', async () => {
    const impressions = 4;
    const templates = [];
    for (const e of DEMO_EMPLOYEES)
      for (let i = 0; i < impressions; i++)
        templates.push({ who: e.employeeCode, t: (await extractFinger(renderFingerImage(e.finger, i))).template });
    let worst = 0;
    let best = Infinity;
    for (let a = 0; a < templates.length; a++)
      for (let b = a + 1; b < templates.length; b++) {
        // The matcher is not symmetric: the enrolment compares the new capture with the others.
        const s = Math.max(
          compareFingerTemplates(templates[a]!.t, templates[b]!.t),
          compareFingerTemplates(templates[b]!.t, templates[a]!.t),
        );
        if (templates[a]!.who === templates[b]!.who) best = Math.min(best, s);
        else worst = Math.max(worst, s);
      }
    expect(worst).toBeLessThan(30);
    expect(best).toBeGreaterThan(100); // and each person's own impressions match
    expect(new Set(DEMO_EMPLOYEES.map((e) => e.finger)).size).toBe(DEMO_EMPLOYEES.length);
    expect(new Set(DEMO_EMPLOYEES.map((e) => e.eye)).size).toBe(DEMO_EMPLOYEES.length);
  }, 60_000);
});
