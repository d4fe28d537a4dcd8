import { afterEach, describe, expect, it } from 'vitest';
import { createSimulatedScanner } from '../../../drivers/simulated.js';
import { syntheticImages } from '../../../src/synthetic/simulator-sources.js';
import type { R30xSimulator } from '../../../drivers/r30x/simulator.js';
import type { TerminalRuntime } from '../../../src/daemon/runtime.js';
import { describeProgress, modalityFlag, simulatedPerson } from '../../../src/cli/enroll-session.js';

let sim: R30xSimulator | null = null;
afterEach(async () => {
  await sim?.close();
  sim = null;
});

async function runtimeWithModule(): Promise<TerminalRuntime> {
  const made = await createSimulatedScanner('r30x', { images: syntheticImages });
  sim = made.simulator;
  return { simulators: new Map([['sim:r30x', made.simulator]]) } as unknown as TerminalRuntime;
}

describe('enroll/identify command helpers', () => {
  it('reads --modality and refuses anything else', () => {
    expect(modalityFlag(undefined)).toBe('finger');
    expect(modalityFlag('iris')).toBe('iris');
    expect(modalityFlag('badge')).toBe('badge');
    expect(() => modalityFlag('nose')).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
  });

  it('turns progress events into lines a person reads', () => {
    expect(describeProgress({ step: 'captured', capture: 2, of: 3, quality: 71 })).toBe('  capture 2/3 taken (quality 71)');
    expect(describeProgress({ step: 'upload', item: 1, statusCode: 'SUCCESS', statusDescription: 'enrolled' })).toBe(
      '  upload item 1: SUCCESS (enrolled)',
    );
    // a module template alone: said as it is, not "upload item undefined: undefined"
    expect(
      describeProgress({ step: 'upload', message: 'only a module template was taken (vendor format): nothing uploaded to the service' }),
    ).toBe('  only a module template was taken (vendor format): nothing uploaded to the service');
    expect(describeProgress({ step: 'upload', error: 'API_TIMEOUT: no answer', message: 'enrol again' })).toBe(
      '  upload failed: API_TIMEOUT: no answer (enrol again)',
    );
    expect(describeProgress({ step: 'module', read: true, press: 4, presses: 5, modulePress: 1, of: 2 })).toBe(
      '  press 4 of 5 read by the module (1/2)',
    );
    expect(
      describeProgress({ step: 'module', action: 'place', press: 4, presses: 5, message: 'press 4 of 5: place the same finger again' }),
    ).toBe('  press 4 of 5: place the same finger again');
    expect(describeProgress({ step: 'lift', press: 1, presses: 5, message: 'lift your finger' })).toBe('  lift your finger');
    expect(describeProgress({ step: 'user', message: 'E1 is Ada' })).toBe('  E1 is Ada');
  });

  it('the simulated person presses when a press is asked for and lifts when asked to', async () => {
    const rt = await runtimeWithModule();
    const person = simulatedPerson(rt, 'finger', 42);
    person.onProgress({ step: 'capture', capture: 1, of: 3, press: 1, presses: 5, action: 'place' });
    expect(sim!.presented).toBe(42);
    person.onProgress({ step: 'captured', capture: 1, of: 3, quality: 80 });
    expect(sim!.presented).toBe(42); // taken, but not lifted until asked
    person.onProgress({ step: 'lift', press: 1, presses: 5 });
    expect(sim!.presented).toBeNull();
    person.onProgress({ step: 'module', action: 'place', press: 4, presses: 5 });
    expect(sim!.presented).toBeNull(); // a moment after the prompt, as a person does
    await new Promise((r) => setTimeout(r, 300));
    expect(sim!.presented).toBe(42);
    person.onProgress({ step: 'module', read: true, press: 4, presses: 5 });
    expect(sim!.presented).toBe(42);
    person.onProgress({ step: 'lift', press: 4, presses: 5 });
    expect(sim!.presented).toBeNull();
    await person.stop();
  });

  it('with holdMs the person lifts by themselves; a missing simulator is a usage error', async () => {
    const rt = await runtimeWithModule();
    const person = simulatedPerson(rt, 'finger', 7, { holdMs: 50 });
    person.onProgress({ step: 'capture' });
    expect(sim!.presented).toBe(7);
    await new Promise((r) => setTimeout(r, 120));
    expect(sim!.presented).toBeNull();
    await person.stop();
    expect(() => simulatedPerson(rt, 'iris', 1)).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
  });
});
