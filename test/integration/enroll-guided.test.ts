/**
 * Guided enrolment (issue 19, item 4), with the terminal's real parts in this process (the
 * extraction worker, the encrypted template cache, the identifier, the scanner workers) and the
 * byte-exact simulators of an R30x, a GT-521 and the iris camera on the in-process transport; the
 * test is the person in front of the scanner and does what the prompts say (or, on purpose, not).
 *
 *  - every press is prompted in order, with its number and the total (captures + the module's own
 *    presses), and a lift is asked for between presses;
 *  - a press too early (the finger put back before the lift was seen) and a press the module does
 *    not take are asked again, and the captures taken before are kept;
 *  - presses of different fingers on a GT-521 make the module forget its enrolment: its presses
 *    start again, the captures stay;
 *  - a press that fails every try ends with a clear error, not a hang; a finger or an eye under
 *    the quality minimum on every try is taken with its best try, its quality said;
 *  - a second enrolment on a scanner already enrolling is refused at once; a cancelled one stops
 *    at once and stores nothing;
 *  - without image extraction the module enrols alone, prompted the same way.
 * The refusal of a scanner another process holds is in enroll-busy-scanner.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { terminalComponents } from '../../src/daemon/wiring.js';
import type { TerminalRuntime } from '../../src/daemon/runtime.js';
import { enroll, type EnrollRequest, type EnrollResult } from '../../src/terminal/enroller.js';
import type { SimulatorControl } from '../../drivers/simulated.js';
import type { ScannerFamily } from '../../drivers/scanner.js';
import { terminalDir, until } from '../helpers/agent.js';

type Ev = Record<string, unknown>;

let stopTerminal: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stopTerminal?.();
  stopTerminal = null;
});

/** A terminal with one simulated scanner, started as `edge-agent enroll` starts it without a daemon. */
async function terminal(family: ScannerFamily): Promise<{ rt: TerminalRuntime; sim: SimulatorControl }> {
  const dir = terminalDir();
  const config = parseConfig({
    dataDir: dir.dataDir,
    terminal: { id: `enroll-${family}`, site: 'plant' },
    scanners: [{ family, path: 'sim' }],
    ops: { enabled: false },
  });
  const secrets = loadSecrets({ file: dir.secretsFile, credentialsDir: null });
  const { runtime, components } = terminalComponents(config, secrets, { ops: false, control: false, siteSync: false });
  const daemon = new Daemon({ config, secrets, deliver: false });
  for (const c of components) daemon.use(c);
  await daemon.start();
  stopTerminal = () => daemon.stop();
  const key = `sim:${family}`;
  await until(async () => runtime.workers.get(key)?.status === 'ready', 20_000, `${family} ready`);
  return { rt: runtime, sim: runtime.simulators.get(key)! };
}

/**
 * The person: presents `id` when a press is asked for (a moment later for the module, as a
 * person does) and lifts when asked; `twist` may do otherwise for one event (return true when
 * it handled it).
 */
function person(
  sim: SimulatorControl,
  id: number,
  twist: (e: Ev, events: Ev[]) => boolean = () => false,
): { events: Ev[]; onProgress: (e: Ev) => void } {
  const events: Ev[] = [];
  return {
    events,
    onProgress(e) {
      events.push(e);
      if (twist(e, events)) return;
      if (e.step === 'capture') sim.present(id);
      else if (e.step === 'module' && (e.action === 'place' || e.action === 'again')) setTimeout(() => sim.present(id), 150);
      else if (e.step === 'lift') sim.lift();
    },
  };
}

/** The prompts and readings, one short line each: "place 1/5", "taken 1/5", "lift 1/5", "module 4/5", "read 4/5", ... */
function script(events: Ev[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const at = `${String(e.press)}/${String(e.presses)}`;
    if (e.step === 'plan') out.push(`plan ${String(e.presses)}`);
    else if (e.step === 'capture') out.push(`${String(e.action)} ${at}`);
    else if (e.step === 'captured') out.push(`taken ${at}`);
    else if (e.step === 'lift') out.push(e.again ? `lift-again ${at}` : `lift ${at}`);
    else if (e.step === 'retry') out.push(`retry ${at}`);
    else if (e.step === 'module' && e.read) out.push(`read ${at}`);
    else if (e.step === 'module' && e.action) out.push(`module-${String(e.action)} ${at}`);
    else if (e.step === 'module' && e.error) out.push('module-failed');
  }
  return out;
}

const REQ: EnrollRequest = { employeeCode: 'E7001', modality: 'finger', position: 'right-index' };

async function run(rt: TerminalRuntime, req: EnrollRequest, onProgress: (e: Ev) => void): Promise<EnrollResult> {
  return enroll(rt, null, req, onProgress);
}

describe('guided enrolment on an R30x (3 captures + 2 module presses)', () => {
  it('prompts every press in order with the total, and asks to lift between presses', async () => {
    const { rt, sim } = await terminal('r30x');
    const p = person(sim, 1001);
    const result = await run(rt, REQ, p.onProgress);
    expect(script(p.events)).toEqual([
      'plan 5',
      'place 1/5',
      'taken 1/5',
      'lift 1/5',
      'place 2/5',
      'taken 2/5',
      'lift 2/5',
      'place 3/5',
      'taken 3/5',
      'lift 3/5',
      'module-place 4/5',
      'read 4/5',
      'lift 4/5',
      'module-place 5/5',
      'read 5/5',
      'lift 5/5',
    ]);
    const said = p.events.map((e) => e.message).filter((m): m is string => typeof m === 'string');
    expect(said).toContain(
      "5 presses: 3 captures, then 2 for the module's own enrolment; place the finger when asked and lift it after each",
    );
    expect(said).toContain('press 1 of 5: place the finger');
    expect(said).toContain('press 2 of 5: place the same finger again');
    expect(said).toContain("press 4 of 5: place the same finger again (the module's own enrolment, 1 of 2)");
    expect(said.filter((m) => m === 'lift your finger')).toHaveLength(5);
    expect(result.templates.map((t) => t.format).sort()).toEqual(['iso19794-2', 'iso19794-2', 'iso19794-2', 'r30x-char']);
    expect(result.moduleError).toBeNull();
  }, 90_000);

  it('a finger put back before the lift was seen is asked to lift again, and no capture is lost', async () => {
    const { rt, sim } = await terminal('r30x');
    let early = false;
    // After the module read press 4, the person lifts and puts the finger straight back (before
    // the module saw the sensor free): the old enrolment gave up after 15 s, losing 3 captures.
    const p = person(sim, 1001, (e) => {
      if (e.step === 'lift' && e.press === 4 && !e.again && !early) {
        early = true;
        sim.lift();
        sim.present(1001);
        return true;
      }
      return false;
    });
    const result = await run(rt, REQ, p.onProgress);
    const s = script(p.events);
    expect(s.slice(s.indexOf('read 4/5'))).toEqual(['read 4/5', 'lift 4/5', 'lift-again 4/5', 'module-place 5/5', 'read 5/5', 'lift 5/5']);
    expect(s.filter((l) => l.startsWith('taken'))).toEqual(['taken 1/5', 'taken 2/5', 'taken 3/5']);
    expect(p.events.find((e) => e.again)?.message).toBe('the finger is still on the sensor: lift it');
    expect(result.templates).toHaveLength(4);
    expect(await rt.cache!.listTemplateMeta({ employeeCode: 'E7001' })).toHaveLength(4);
  }, 90_000);

  it('a module press that is not taken is asked again, keeping the presses and captures before it', async () => {
    const { rt, sim } = await terminal('r30x');
    let spoiled = false;
    const p = person(sim, 1001, (e) => {
      // Press 5 poorly once (the module's Img2Tz finds too few features), then properly.
      if (e.step === 'module' && e.action === 'place' && e.press === 5 && !spoiled) {
        spoiled = true;
        sim.setFault('low-quality', true);
      }
      if (e.step === 'module' && e.action === 'again') sim.setFault('low-quality', false);
      return false;
    });
    const result = await run(rt, REQ, p.onProgress);
    const s = script(p.events);
    expect(s.slice(s.indexOf('read 4/5'))).toEqual([
      'read 4/5',
      'lift 4/5',
      'module-place 5/5',
      'lift 5/5',
      'module-again 5/5',
      'read 5/5',
      'lift 5/5',
    ]);
    const again = p.events.find((e) => e.action === 'again')!;
    expect(again.message).toMatch(/^press 5 of 5 again: place the same finger again \(the module did not take it: .*features/);
    expect(s.filter((l) => l.startsWith('taken'))).toHaveLength(3);
    expect(result.templates).toHaveLength(4);
    expect(result.moduleError).toBeNull();
  }, 90_000);

  it('a poor capture is asked again, the others kept; a press poor on every try is enrolled with its best try, its quality noted', async () => {
    const { rt, sim } = await terminal('r30x');
    // Press 2 poor once (the sensor dirty): refused by extraction or the quality gate, asked again, then good.
    const p = person(sim, 1001, (e) => {
      if (e.step === 'capture' && e.press === 2) sim.setFault('low-quality', e.action === 'place');
      return false;
    });
    const result = await run(rt, REQ, p.onProgress);
    const s = script(p.events);
    expect(s.slice(0, 9)).toEqual([
      'plan 5',
      'place 1/5',
      'taken 1/5',
      'lift 1/5',
      'place 2/5',
      'retry 2/5',
      'lift 2/5',
      'again 2/5',
      'taken 2/5',
    ]);
    expect(p.events.find((e) => e.step === 'retry')!.message).toMatch(
      /^press 2 of 5 not taken \((quality \d+ is below 40|not usable: BIOMETRICS_\w+: .+)\); the 1 taken before are kept$/,
    );
    expect(s.filter((l) => l.startsWith('taken'))).toEqual(['taken 1/5', 'taken 2/5', 'taken 3/5']);
    expect(result.templates).toHaveLength(4);

    // Poor on every try: three tries, then the best of them is enrolled with its quality noted
    // (a finger is never refused for quality alone; enrolment's gate says what it took).
    const q = person(sim, 1002, (e) => {
      if (e.step === 'capture') sim.setFault('low-quality', e.press === 2);
      return false;
    });
    const poor = await run(rt, { ...REQ, employeeCode: 'E7002' }, q.onProgress);
    sim.setFault('low-quality', false);
    expect(script(q.events).filter((l) => l.startsWith('retry'))).toEqual(['retry 2/5', 'retry 2/5']);
    const low = q.events.find((e) => e.step === 'captured' && e.press === 2)!;
    expect(low).toMatchObject({ lowQuality: true });
    expect(low.quality as number).toBeLessThan(40);
    expect(low.message).toMatch(
      /^press 2 of 5 taken with quality \d+ \(under 40, the best of 3 tries\): a finger is not refused for quality alone$/,
    );
    expect(poor.templates).toHaveLength(4);
  }, 90_000);

  it('a module enrolment that fails every try keeps the captures and says so', async () => {
    const { rt, sim } = await terminal('r30x');
    const p = person(sim, 1001, (e) => {
      if (e.step === 'module' && e.press === 5) sim.setFault('low-quality', true);
      return false;
    });
    const result = await run(rt, REQ, p.onProgress);
    sim.setFault('low-quality', false);
    expect(script(p.events).filter((l) => l.startsWith('module-again'))).toEqual(['module-again 5/5', 'module-again 5/5']);
    expect(result.moduleError).toMatch(/press 2 of 2 was not taken in 3 tries/);
    expect(p.events.find((e) => e.step === 'module' && e.error)!.message).toMatch(/the 3 captures are kept/);
    expect(result.templates.map((t) => t.format)).toEqual(['iso19794-2', 'iso19794-2', 'iso19794-2']);
  }, 90_000);
});

describe('one enrolment at a time on a scanner', () => {
  it('a second enrolment while one runs is refused at once, and the first goes on', async () => {
    const { rt, sim } = await terminal('r30x');
    const p = person(sim, 1001);
    let second: Promise<unknown> | null = null;
    const first = run(rt, REQ, (e) => {
      // While the first waits for press 1, another enrolment on the same scanner.
      if (e.step === 'plan')
        second = run(rt, { ...REQ, employeeCode: 'E7009' }, () => undefined).then(
          () => null,
          (err: unknown) => err,
        );
      p.onProgress(e);
    });
    expect((await first).templates).toHaveLength(4);
    expect(await second).toMatchObject({
      code: 'AGENT_SCANNER_BUSY',
      message: 'an enrolment is already running on scanner sim:r30x',
      hint: expect.stringMatching(/wait for it to finish/),
    });
    // Once it is done the scanner takes the next one.
    const q = person(sim, 1002);
    expect((await run(rt, { ...REQ, employeeCode: 'E7009' }, q.onProgress)).templates).toHaveLength(4);
  }, 90_000);
});

describe('a cancelled enrolment (the command stopped)', () => {
  it('stops at once, stores nothing, and leaves the scanner to the next enrolment', async () => {
    const { rt, sim } = await terminal('r30x');
    const stop = new AbortController();
    // Press 1 is taken; the command is stopped while press 2 is awaited (nobody presses).
    const p = person(sim, 1001, (e) => {
      if (e.step === 'capture' && e.press === 2) {
        setTimeout(() => stop.abort(), 200);
        return true;
      }
      return false;
    });
    const err = await run(rt, { ...REQ, signal: stop.signal }, p.onProgress).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'ENROLL_CANCELLED', message: expect.stringMatching(/nothing was stored/) });
    expect(await rt.cache!.listTemplateMeta({ employeeCode: 'E7001' })).toEqual([]);
    const q = person(sim, 1001);
    expect((await run(rt, REQ, q.onProgress)).templates).toHaveLength(4);
  }, 90_000);
});

describe('without image extraction (the models failed to load)', () => {
  it('enrols on the module alone: one press to check the finger is not enrolled, then the module presses, each prompted', async () => {
    const { rt, sim } = await terminal('r30x');
    const noExtractor = Object.create(rt, { extractor: { value: null } }) as TerminalRuntime;
    const p = person(sim, 1001);
    const result = await run(noExtractor, REQ, p.onProgress);
    expect(script(p.events)).toEqual([
      'plan 3',
      'place 1/3',
      'lift 1/3',
      'module-place 2/3',
      'read 2/3',
      'lift 2/3',
      'module-place 3/3',
      'read 3/3',
      'lift 3/3',
    ]);
    expect(p.events[1]!.message).toMatch(/^no image extraction here: enrolling on the module only, 3 presses \(1 to check/);
    expect(result.templates.map((t) => t.format)).toEqual(['r30x-char']);
  }, 90_000);
});

describe('guided enrolment on a GT-521 (3 captures + 3 module presses)', () => {
  it('announces 6 presses; presses of another finger make the module start its own presses again, the captures stay', async () => {
    const { rt, sim } = await terminal('gt521');
    let wrong = false;
    const p = person(sim, 1001, (e) => {
      // Press 5 (the module's second) with another finger, once: NACK_ENROLL_FAILED.
      if (e.step === 'module' && e.action === 'place' && e.press === 5 && !wrong) {
        wrong = true;
        setTimeout(() => sim.present(1444), 150);
        return true;
      }
      return false;
    });
    const result = await run(rt, REQ, p.onProgress);
    const s = script(p.events);
    expect(s.slice(0, 11)).toEqual([
      'plan 6',
      'place 1/6',
      'taken 1/6',
      'lift 1/6',
      'place 2/6',
      'taken 2/6',
      'lift 2/6',
      'place 3/6',
      'taken 3/6',
      'lift 3/6',
      'module-place 4/6',
    ]);
    expect(s.slice(10)).toEqual([
      'module-place 4/6',
      'read 4/6',
      'lift 4/6',
      'module-place 5/6',
      'lift 5/6',
      'module-again 4/6',
      'read 4/6',
      'lift 4/6',
      'module-place 5/6',
      'read 5/6',
      'lift 5/6',
      'module-place 6/6',
      'read 6/6',
      'lift 6/6',
    ]);
    expect(p.events.find((e) => e.action === 'again')!.message).toMatch(/press 4 of 6 again: .*ENROLL|three presses do not agree/);
    expect(result.templates.map((t) => t.format).sort()).toEqual(['gt521', 'iso19794-2', 'iso19794-2', 'iso19794-2']);
  }, 90_000);
});

describe('guided enrolment on the iris camera (3 captures, no module)', () => {
  it('prompts each capture with the total and asks to look away between them', async () => {
    const { rt, sim } = await terminal('iris-hid');
    const p = person(sim, 2001);
    const result = await run(rt, { employeeCode: 'E7003', modality: 'iris', position: 'right' }, p.onProgress);
    expect(script(p.events)).toEqual([
      'plan 3',
      'place 1/3',
      'taken 1/3',
      'lift 1/3',
      'place 2/3',
      'taken 2/3',
      'lift 2/3',
      'place 3/3',
      'taken 3/3',
      'lift 3/3',
    ]);
    const said = p.events.map((e) => e.message);
    expect(said).toContain('3 captures; look at the camera when asked and look away after each');
    expect(said).toContain('press 2 of 3: look at the camera again');
    expect(said).toContain('look away from the camera');
    expect(result.templates).toHaveLength(3);
  }, 90_000);

  it('an eye under the quality minimum on every try is enrolled with its best try, its quality noted, not refused', async () => {
    const { rt, sim } = await terminal('iris-hid');
    const p = person(sim, 2002);
    // A minimum no capture reaches: every press takes its three tries, then the best of them.
    const result = await run(rt, { employeeCode: 'E7004', modality: 'iris', position: 'right', minQuality: 100 }, p.onProgress);
    expect(script(p.events).filter((l) => l.startsWith('retry'))).toEqual([
      'retry 1/3',
      'retry 1/3',
      'retry 2/3',
      'retry 2/3',
      'retry 3/3',
      'retry 3/3',
    ]);
    const taken = p.events.filter((e) => e.step === 'captured');
    expect(taken).toHaveLength(3);
    for (const t of taken) {
      expect(t).toMatchObject({ lowQuality: true });
      expect(t.message).toMatch(
        /^press \d of 3 taken with quality \d+ \(under 100, the best of 3 tries\): an eye is not refused for quality alone$/,
      );
    }
    expect(result.templates).toHaveLength(3);
  }, 90_000);
});
