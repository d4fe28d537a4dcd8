import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/core/errors.js';
import { ScannerWorker, type CaptureOutcome } from '../../../src/terminal/scanner-worker.js';
import { workerFor } from '../../../src/terminal/guided-capture.js';
import { PunchStep } from '../../../src/terminal/punch-step.js';
import { Recognizer } from '../../../src/terminal/recognizer.js';
import { FakeScanner } from './scanner.fixture.js';
import { fakeEngines, fakePolicy } from './engines.fixture.js';

function nextCapture(worker: ScannerWorker): Promise<CaptureOutcome> {
  return new Promise((resolve) => worker.once('capture', resolve));
}

/** The worker with the real recognizer and punch step over in-memory engines (module slot 1 is E-MODULE) and policy. */
function setup(scanner: FakeScanner, hostMatches: Record<number, string>, needed?: number) {
  const policy = fakePolicy();
  const worker = new ScannerWorker({
    key: 'fake',
    open: async () => scanner,
    recognizer: new Recognizer(
      fakeEngines({ gallery: hostMatches, slots: { 1: 'E-MODULE' }, ...(needed !== undefined ? { needed } : {}) }),
    ),
    punch: new PunchStep(policy),
    cooldownMs: 10,
    liftTimeoutMs: 2000,
    reopenBaseMs: 5,
    reopenCapMs: 20,
  });
  return { worker, punches: policy.punches };
}

describe('scanner worker', () => {
  it('uses the module search first, then host matching, and gives feedback after the punch', async () => {
    const scanner = new FakeScanner();
    scanner.slots.set(1, 7);
    const { worker, punches } = setup(scanner, { 9: 'E-HOST' });
    worker.start();
    const press = async (finger: number) => {
      const next = nextCapture(worker);
      scanner.present = finger;
      const out = await next;
      // Lifted and seen lifted before the next press (pressed at once, it would be the same
      // press held on, read again only after liftTimeoutMs).
      await scanner.liftSeen();
      return out;
    };
    expect(await press(7)).toMatchObject({ path: 'module', employeeCode: 'E-MODULE', result: 'punched' });
    expect(await press(9)).toMatchObject({ path: 'host', employeeCode: 'E-HOST', result: 'punched', score: 55 });
    expect(await press(4)).toMatchObject({ result: 'unknown', employeeCode: null });
    scanner.failImage = true;
    const out = await press(5);
    expect(out.result).toBe('try-again');
    expect(out.detail).toContain('DRIVER_LOW_QUALITY');
    await worker.stop();
    expect(punches.slice(0, 2)).toEqual(['E-MODULE', 'E-HOST']);
    expect(scanner.feedbacks).toContain('accepted');
    expect(scanner.feedbacks).toContain('unknown');
    expect(scanner.feedbacks).toContain('try-again');
  });

  it('an unknown read says what the match needed, where the matcher moves it with the gallery (irises)', async () => {
    const scanner = new FakeScanner();
    const { worker } = setup(scanner, { 9: 'E-HOST' }, 0.279);
    worker.start();
    const next = nextCapture(worker);
    scanner.present = 4;
    expect(await next).toMatchObject({ result: 'unknown', employeeCode: null, needed: 0.279 });
    await worker.stop();
  });

  it('reads one press once, however long the finger stays', async () => {
    const scanner = new FakeScanner();
    const { worker, punches } = setup(scanner, { 3: 'E3' });
    worker.start();
    scanner.present = 3;
    await nextCapture(worker);
    await new Promise((r) => setTimeout(r, 300));
    expect(punches).toEqual(['E3']);
    await scanner.liftSeen();
    scanner.present = 3;
    await nextCapture(worker);
    expect(punches).toEqual(['E3', 'E3']);
    await worker.stop();
  });

  it('picks a scanner up again after it was unplugged', async () => {
    const scanner = new FakeScanner();
    const { worker } = setup(scanner, { 3: 'E3' });
    const statuses: string[] = [];
    worker.on('status', (s) => statuses.push(s.status));
    worker.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(worker.status).toBe('ready');
    scanner.unplugged = true;
    await new Promise((r) => setTimeout(r, 80));
    expect(worker.status).not.toBe('ready');
    scanner.unplugged = false;
    scanner.present = 3;
    const out = await nextCapture(worker);
    expect(out.employeeCode).toBe('E3');
    expect(scanner.opens).toBeGreaterThanOrEqual(2);
    expect(statuses).toContain('disconnected');
    await worker.stop();
  });

  it('lends the scanner to enrolment and refuses when it is not connected', async () => {
    const scanner = new FakeScanner();
    scanner.unplugged = true;
    const { worker } = setup(scanner, {});
    worker.start();
    await expect(worker.withScanner(async () => 1)).rejects.toMatchObject({ code: 'AGENT_SCANNER_UNAVAILABLE' });
    scanner.unplugged = false;
    while (worker.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
    expect(await worker.withScanner(async (s) => (await s.info()).model)).toBe('fake');
    await worker.stop();
  });
});

describe('a scanner that does not answer is closed on every try (real drivers over the memory transport)', () => {
  it('the wrong family on the line: each failed open closes its port, so the next try does not find it locked', async () => {
    const { createMemoryPair } = await import('../../../drivers/transport/memory-transport.js');
    const { attachSimulator } = await import('../../../drivers/simulated.js');
    const { R30xScanner } = await import('../../../drivers/r30x/scanner.js');
    const { host, device } = createMemoryPair('wrong-family');
    const { fallbackImages } = await import('../../../drivers/simulator/images.js');
    const gt521 = await attachSimulator('gt521', device, { pacing: false, images: fallbackImages }); // a GT-521 where an R30x is configured
    const tries: Array<{ openAfterFailure: boolean }> = [];
    const worker = new ScannerWorker({
      key: 'r30x:wrong-family',
      open: async () => new R30xScanner(host, { timeoutMs: 30 }),
      recognizer: new Recognizer(fakeEngines({})),
      punch: new PunchStep(fakePolicy()),
      reopenBaseMs: 10,
      reopenCapMs: 20,
    });
    worker.on('status', (s) => {
      if (s.status === 'disconnected') tries.push({ openAfterFailure: host.isOpen });
    });
    worker.start();
    const deadline = Date.now() + 10_000;
    while (tries.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await worker.stop();
    await gt521.close();
    expect(tries.length).toBeGreaterThanOrEqual(3);
    expect(tries.every((t) => !t.openAfterFailure)).toBe(true);
    expect(worker.status).toBe('stopped');
  });
});

describe('a session (enroll, identify) takes the scanner from the capture loop', () => {
  it('gets the finger already on the scanner, and nothing is punched, during or after it', async () => {
    const scanner = new FakeScanner();
    const { worker, punches } = setup(scanner, { 9: 'E9' });
    const captures: CaptureOutcome[] = [];
    worker.on('capture', (c) => captures.push(c));
    worker.start();
    await new Promise((r) => setTimeout(r, 60));
    // The finger goes on as the session asks for the scanner (before any prompt).
    const session = worker.withScanner(async (s, handed) => {
      expect(worker.taken).toBe(true);
      const there = await s.waitForPresence({ timeoutMs: 50 });
      return { there, image: (handed?.image ?? (await s.captureImage())).pixels[0] };
    });
    scanner.present = 9;
    expect(await session).toEqual({ there: true, image: 9 });
    expect(worker.taken).toBe(false);
    // Given back with the finger still on: not a new press, so still no punch.
    await new Promise((r) => setTimeout(r, 300));
    expect(punches).toEqual([]);
    expect(captures).toEqual([]);
    // A new press after the lift is a punch again.
    await scanner.liftSeen();
    const next = nextCapture(worker);
    scanner.present = 9;
    expect(await next).toMatchObject({ employeeCode: 'E9', result: 'punched' });
    await worker.stop();
  });

  /** Finger 9 (E9) pressed, and the loop reading its image, which travels for 400 ms (a serial line: seconds). */
  async function readingAnImage() {
    const scanner = new FakeScanner();
    scanner.imageDelayMs = 400;
    const { worker, punches } = setup(scanner, { 9: 'E9' });
    const captures: CaptureOutcome[] = [];
    worker.on('capture', (c) => captures.push(c));
    worker.start();
    await new Promise((r) => setTimeout(r, 60));
    scanner.present = 9;
    await new Promise((r) => setTimeout(r, 150));
    return { scanner, worker, punches, captures };
  }

  it('is handed the image the loop had on its way, instead of it becoming a punch', async () => {
    const { scanner, worker, punches, captures } = await readingAnImage();
    let captured = 0;
    const original = scanner.captureImage.bind(scanner);
    scanner.captureImage = async () => {
      captured++;
      return original();
    };
    const handed = await worker.withScanner(async (_s, h) => h);
    expect(handed?.image?.pixels[0]).toBe(9);
    expect(captured).toBe(0); // the session did not ask for another image
    scanner.lift();
    await new Promise((r) => setTimeout(r, 200));
    expect(punches).toEqual([]);
    expect(captures).toEqual([]);
    await worker.stop();
  });

  it("keeps a read whose finger was lifted before the session took the scanner as that person's punch, and hands the session nothing", async () => {
    const { scanner, worker, punches, captures } = await readingAnImage();
    scanner.lift(); // the person walks away while the image travels; the next one is enrolled
    const handed = await worker.withScanner(async (_s, h) => h);
    expect(handed).toBeNull();
    expect(punches).toEqual(['E9']);
    expect(captures).toMatchObject([{ employeeCode: 'E9', result: 'punched' }]);
    await worker.stop();
  });
});

describe('a scanner another process holds', () => {
  it('is refused at once with AGENT_SCANNER_BUSY naming the holder (enrol through that agent), and used once it is free', async () => {
    const scanner = new FakeScanner();
    let held = true;
    const busy = () =>
      new AgentError('TRANSPORT_BUSY', '/dev/fingerprint0 is in use by another program', {
        path: '/dev/fingerprint0',
        holders: [{ pid: 4242, command: 'node /opt/edge-agent/current/dist/cli/main.js run' }],
      });
    const worker = new ScannerWorker({
      key: 'r30x:/dev/fingerprint0',
      modality: 'finger',
      open: async () => {
        if (held) throw busy();
        return scanner;
      },
      recognizer: new Recognizer(fakeEngines({})),
      punch: new PunchStep(fakePolicy()),
      reopenBaseMs: 5,
      reopenCapMs: 20,
    });
    worker.start();
    try {
      await until(async () => worker.lastError?.code === 'TRANSPORT_BUSY');
      // Never opened, yet known as the finger scanner: the enroller finds it and is told who holds it.
      const rt = { workers: new Map([[worker.key, worker]]) } as unknown as Parameters<typeof workerFor>[0];
      const err = (() => {
        try {
          workerFor(rt, 'finger');
          return null;
        } catch (e) {
          return e as AgentError;
        }
      })();
      expect(err).toMatchObject({
        code: 'AGENT_SCANNER_BUSY',
        message:
          'scanner r30x:/dev/fingerprint0 is held by pid 4242 (node /opt/edge-agent/current/dist/cli/main.js run): an edge-agent runs with it',
      });
      expect(err!.hint).toMatch(
        /^enroll through that agent: run edge-agent enroll with its configuration .* control socket; or stop it first \(systemctl stop edge-agent\)$/,
      );
      await expect(worker.withScanner(async () => 'used')).rejects.toMatchObject({ code: 'AGENT_SCANNER_BUSY' });

      held = false;
      await until(async () => worker.status === 'ready');
      expect(worker.lastError).toBeNull();
      expect(workerFor(rt, 'finger')).toBe(worker);
      expect(await worker.withScanner(async () => 'used')).toBe('used');
    } finally {
      await worker.stop();
    }
  });
});

async function until(fn: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error('not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}
