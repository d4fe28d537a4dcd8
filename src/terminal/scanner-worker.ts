/**
 * One scanner's life in the daemon: open it (again and again with backoff while it is unplugged),
 * wait for a finger, an eye or a badge, have the recognizer say who it is (recognizer.ts: a card
 * reader's badge by its keyed hash; the module's own search first where the module keeps
 * templates, then host matching from the image), punch through the punch step (punch-step.ts:
 * the policy, the outbox), and give feedback on the module (a reader without lights: on the
 * terminal's other scanners, `fallbackFeedback`).
 *
 * The worker never branches on the scanner family: it asks for capabilities.
 */
import { isScannerGone, type BadgeRead, type CapturedImage, type Feedback, type Scanner, type ScannerInfo } from '../../drivers/scanner.js';
import { backoffDelay } from '../core/backoff.js';
import { AgentError, toAgentError } from '../core/errors.js';
import { TypedEmitter } from '../core/events.js';
import { logger, type Logger } from '../core/logger.js';
import type { ScannerModality } from '../core/modality.js';
import { monotonicMs, sleep } from '../core/time.js';
import type { PunchStep, PunchVerdict } from './punch-step.js';
import type { Recognition, RecognizedScanner, Recognizer } from './recognizer.js';
import { runSecondFinger, secondFingerWanted, type SecondFingerPolicy } from './second-finger.js';

/**
 * What the person is shown after the punch step: a punch or a repeat is accepted (green, beep); a
 * badge waiting for its second factor asks for the next step; a kind of read the rule does not
 * take here asks to try again (another way); a punch that could not be recorded is an error.
 */
const FEEDBACK: Record<PunchVerdict['result'], Feedback> = {
  punched: 'accepted',
  duplicate: 'accepted',
  awaiting: 'enroll-step',
  denied: 'try-again',
  refused: 'error',
};

export type ScannerStatus = 'connecting' | 'ready' | 'disconnected' | 'stopped';

export interface CaptureOutcome {
  scanner: string;
  path: 'module' | 'host' | null;
  employeeCode: string | null;
  score: number | null;
  /** What the decision needed, where that moves with the gallery's size (irises: Identification.needed). */
  needed?: number;
  /** `awaiting`: a first factor taken (policy `both`); `denied`: the policy does not take this kind of read here. */
  result: 'unknown' | 'try-again' | PunchVerdict['result'];
  direction?: 'in' | 'out';
  /** Milliseconds from the finger or eye noticed to the punch durable (or the decision). */
  latencyMs: number;
  /** A second finger was asked for (two people close): `accept` when it told them apart, else why not. */
  secondFinger?: 'accept' | 'ambiguous' | 'timeout' | 'unusable';
  detail?: string;
}

export interface ScannerWorkerEvents extends Record<string, unknown> {
  status: { scanner: string; status: ScannerStatus; info: ScannerInfo | null; error?: string };
  capture: CaptureOutcome;
}

/**
 * What the capture loop had read when a session (enroll, identify) took the scanner: the
 * session's, never a punch. A finger whose image was on its way, a card read the reader sends
 * once: the session uses it instead of asking for another press.
 */
export interface HandedRead {
  image?: CapturedImage;
  badge?: BadgeRead;
}

/** A session's use of the scanner: the scanner, and what was read just as it was taken (or null). */
export type ScannerSession<T> = (scanner: Scanner, handed: HandedRead | null) => Promise<T>;

export interface ScannerWorkerOptions {
  /** Stable key of this scanner (config path or simulator name). */
  key: string;
  /** What the scanner reads, known from its family before it ever opened. */
  modality?: ScannerModality;
  open: () => Promise<Scanner>;
  /** Who is at the scanner: card, module search, image (recognizer.ts). */
  recognizer: Recognizer;
  /** The punch policy's answer for a recognized person (punch-step.ts). */
  punch: PunchStep;
  /** Called once the scanner is open (and after each reconnection), e.g. to place module templates. */
  onReady?: (scanner: Scanner, info: ScannerInfo) => Promise<void>;
  reopenBaseMs?: number;
  reopenCapMs?: number;
  /** Pause after a capture (and after the finger or eye has gone) so one press is not read twice. */
  cooldownMs?: number;
  /** Longest wait for the finger or eye to go away after a capture. */
  liftTimeoutMs?: number;
  /** Feedback for a card reader that has no light of its own (the terminal's other scanners). */
  fallbackFeedback?: (kind: Feedback) => Promise<void>;
  /** Ask for another finger when one leaves two people close (policy.secondFinger); off when absent. */
  secondFinger?: SecondFingerPolicy;
}

export class ScannerWorker extends TypedEmitter<ScannerWorkerEvents> {
  readonly #o: ScannerWorkerOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #scanner: Scanner | null = null;
  #info: ScannerInfo | null = null;
  #status: ScannerStatus = 'connecting';
  #lastError: AgentError | null = null;
  #loop: Promise<void> | null = null;
  /** Exclusive use of the scanner (enrolment borrows it from the capture loop). */
  #lock: Promise<void> = Promise.resolve();
  /** Sessions that took or wait for the scanner: while any does, nothing presented is a punch. */
  #paused = 0;
  /** Read by the capture loop after a session asked for the scanner: handed to that session. */
  #handed: HandedRead | null = null;
  /** The loop is reading what was presented (an image may take seconds on a serial line). */
  #capturing = false;
  /** A session gave the scanner back: a finger still on it is not a new press, wait for the lift first. */
  #afterSession = false;

  constructor(options: ScannerWorkerOptions) {
    super();
    this.#o = options;
    this.#log = logger('agent:scanner').child({ scanner: options.key });
  }

  get key(): string {
    return this.#o.key;
  }

  get status(): ScannerStatus {
    return this.#status;
  }

  get info(): ScannerInfo | null {
    return this.#info;
  }

  /** What it reads: from the open scanner, else from its family. */
  get modality(): ScannerModality | null {
    return this.#info?.modality ?? this.#o.modality ?? null;
  }

  /** Why the last open failed (null once it is ready): `TRANSPORT_BUSY` when another process holds it. */
  get lastError(): AgentError | null {
    return this.#lastError;
  }

  /**
   * Refuses at once when another process holds the device (AGENT_SCANNER_BUSY, naming it where
   * the system shows it), instead of waiting for a scanner this process will not get.
   */
  assertNotHeldElsewhere(): void {
    const e = this.#lastError;
    if (this.#status === 'ready' || e?.code !== 'TRANSPORT_BUSY') return;
    const holders = (e.context.holders as Array<{ pid: number; command: string }> | undefined) ?? [];
    const who = holders.length > 0 ? holders.map((h) => `pid ${h.pid}${h.command ? ` (${h.command})` : ''}`).join(', ') : 'another process';
    const agent = holders.some((h) => /edge-agent|cli\/main\.[jt]s/.test(h.command));
    throw new AgentError(
      'AGENT_SCANNER_BUSY',
      `scanner ${this.#o.key} is held by ${who}${agent ? ': an edge-agent runs with it' : ''}`,
      { scanner: this.#o.key, holders },
      {
        hint: agent
          ? "enroll through that agent: run edge-agent enroll with its configuration (--config FILE, or none for the service's /etc/edge-agent/config.yaml) and it goes through the agent's control socket; or stop it first (systemctl stop edge-agent)"
          : "stop the program holding the port, then run the command again; when it is the agent's service, enroll through it (edge-agent enroll with the service's configuration) or systemctl stop edge-agent",
        retryable: true,
        cause: e,
      },
    );
  }

  #setStatus(status: ScannerStatus, error?: string): void {
    if (status === this.#status && !error) return;
    this.#status = status;
    this.emit('status', { scanner: this.#o.key, status, info: this.#info, ...(error ? { error } : {}) });
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop?.catch(() => undefined);
    await this.#scanner?.close().catch(() => undefined);
    this.#scanner = null;
    this.#setStatus('stopped');
  }

  /** True while the capture loop reads what was presented (a session taking the scanner now is handed that read). */
  get capturing(): boolean {
    return this.#capturing;
  }

  /** True while a session (enroll, identify) holds the scanner or waits for it. */
  get taken(): boolean {
    return this.#paused > 0;
  }

  /**
   * Runs `fn` with the scanner while the capture loop waits (enrolment, identify on demand). From
   * the call on, nothing presented on this scanner is a punch: a capture the loop has under way
   * is handed to `fn` (`handed`), and a finger or card already there is left for it to read.
   * Rejects with AGENT_SCANNER_BUSY when another process holds the device, and with
   * AGENT_SCANNER_UNAVAILABLE when the scanner is not connected.
   */
  async withScanner<T>(fn: ScannerSession<T>, { session = true }: { session?: boolean } = {}): Promise<T> {
    // A person's session (enroll, identify) reserves the scanner: nothing presented meanwhile is a
    // punch, and a finger still on it afterwards waits for the lift. Upkeep (placing or deleting
    // module templates) only takes its turn between captures: a capture under way stays a punch,
    // and a finger placed just after is read as a press.
    const unreserve = session ? this.reserve() : () => undefined;
    const prev = this.#lock;
    let release!: () => void;
    this.#lock = new Promise<void>((r) => (release = r));
    try {
      await prev;
      const scanner = this.#scanner;
      if (!scanner || this.#status !== 'ready') {
        this.assertNotHeldElsewhere();
        throw new AgentError(
          'AGENT_SCANNER_UNAVAILABLE',
          `scanner ${this.#o.key} is ${this.#status}`,
          { scanner: this.#o.key },
          { hint: 'check the cable and "edge-agent devices"; the agent reconnects by itself', retryable: true },
        );
      }
      const handed = session ? this.#handed : null;
      if (session) this.#handed = null;
      return await fn(scanner, handed);
    } finally {
      unreserve();
      release();
    }
  }

  /**
   * Takes the scanner from the capture loop until the returned function is called, without
   * waiting for it: from now on what is presented here is no punch (a capture under way is kept
   * for the session's `withScanner`). A session reserves first, before it checks the person
   * with the service, so a card shown or a finger placed meanwhile is its own.
   */
  reserve(): () => void {
    this.#paused++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#paused--;
      if (this.#paused === 0) {
        this.#handed = null;
        this.#afterSession = true;
      }
    };
  }

  async #openWithBackoff(): Promise<void> {
    let attempt = 0;
    while (!this.#abort.signal.aborted) {
      let opening: Scanner | null = null;
      try {
        const scanner = await this.#o.open();
        opening = scanner;
        const info = await scanner.open();
        this.#scanner = scanner;
        this.#info = info;
        scanner.on('disconnect', (err) => {
          if (this.#scanner !== scanner) return;
          this.#log.warn({ err: err.message }, 'scanner disconnected; reconnecting');
          this.#setStatus('disconnected', err.message);
        });
        await this.#o.onReady?.(scanner, info);
        this.#lastError = null;
        this.#setStatus('ready');
        this.#log.info({ family: info.family, model: info.model, path: info.path }, 'scanner ready');
        return;
      } catch (err) {
        const e = toAgentError(err, 'AGENT_SCANNER_OPEN');
        this.#lastError = e;
        const delay = backoffDelay(attempt++, { baseMs: this.#o.reopenBaseMs ?? 500, capMs: this.#o.reopenCapMs ?? 30_000 }) + 100;
        if (attempt === 1 || attempt % 10 === 0)
          this.#log.warn({ code: e.code, err: e.message, retryInMs: delay }, 'scanner not available');
        // The one that failed to open holds its port too: closed, or the next try finds it locked.
        if (opening && opening !== this.#scanner) await opening.close().catch(() => undefined);
        await this.#scanner?.close().catch(() => undefined);
        this.#scanner = null;
        this.#setStatus('disconnected', e.message);
        await sleep(delay, this.#abort.signal).catch(() => undefined);
      }
    }
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      if (!this.#scanner || this.#status !== 'ready') {
        await this.#scanner?.close().catch(() => undefined);
        this.#scanner = null;
        this.#setStatus('connecting');
        await this.#openWithBackoff();
        continue;
      }
      if (this.#paused > 0) {
        // Taken by a session (reserved, or using it): nothing here is a punch until it is given back.
        await this.#lock;
        await sleep(50, signal).catch(() => undefined);
        continue;
      }
      const scanner = this.#scanner;
      let release!: () => void;
      const prev = this.#lock;
      this.#lock = new Promise<void>((r) => (release = r));
      try {
        await prev;
        if (this.#afterSession) {
          this.#afterSession = false;
          await this.#settle(scanner);
          continue;
        }
        const present = await scanner.waitForPresence({ timeoutMs: 500, signal });
        // A session asked for the scanner meanwhile: what is presented is for it, left where it is.
        if (present && !signal.aborted && this.#paused === 0) {
          this.#capturing = true;
          const outcome = await this.handlePresence(scanner).finally(() => (this.#capturing = false));
          if (outcome) {
            this.emit('capture', outcome);
            await this.#settle(scanner);
          }
        }
      } catch (err) {
        const e = toAgentError(err, 'AGENT_CAPTURE');
        if (signal.aborted) break;
        if (isScannerGone(e.code)) {
          this.#setStatus('disconnected', e.message);
        } else {
          this.#log.warn({ code: e.code, err: e.message }, 'capture failed');
          await sleep(200, signal).catch(() => undefined);
        }
      } finally {
        release();
      }
    }
  }

  /** One press is one capture: wait until the finger is lifted (or the eye has gone). A card reader has nothing to lift: its next read is the next card. */
  async #settle(scanner: Scanner): Promise<void> {
    const signal = this.#abort.signal;
    const deadline = monotonicMs() + (this.#o.liftTimeoutMs ?? 10_000);
    try {
      while (!scanner.capabilities.credential && !signal.aborted && monotonicMs() < deadline) {
        if (!(await scanner.waitForPresence({ timeoutMs: 100, signal }))) break;
        await sleep(100, signal);
      }
      await sleep(this.#o.cooldownMs ?? 300, signal);
    } catch {
      // aborted, or the device went away: the loop handles both
    }
  }

  /**
   * Shows `kind` on this scanner when it is ready and has lights (another scanner's outcome: a
   * card reader's without lights). Never fails: a busy or absent scanner just shows nothing.
   */
  async feedbackIfAble(kind: Feedback): Promise<void> {
    const scanner = this.#scanner;
    if (!scanner || this.#status !== 'ready' || !scanner.capabilities.feedback) return;
    await scanner
      .feedback(kind)
      .catch((err: unknown) => this.#log.debug({ err: String(err), kind }, 'feedback for another scanner failed'));
  }

  async #feedback(scanner: Scanner, kind: Feedback): Promise<void> {
    try {
      if (scanner.capabilities.credential && !scanner.capabilities.feedback && this.#o.fallbackFeedback)
        await this.#o.fallbackFeedback(kind);
      else await scanner.feedback(kind);
    } catch (err) {
      this.#log.debug({ err: (err as Error).message, kind }, 'feedback failed');
    }
  }

  /**
   * One press, one sequence: the recognizer reads the card, the module's search or the image and
   * says who it is (capture → extract → identify); the punch step asks the policy, which records
   * the punch in the outbox; then the person gets the feedback (only once the punch is durable).
   * Null when a session took the scanner while the capture was under way and the finger or eye is
   * still there (or the read was a card): what was read is handed to it, nothing is punched and the
   * person is shown nothing here. A finger or eye gone by then was someone else's press: punched.
   */
  private async handlePresence(scanner: Scanner): Promise<CaptureOutcome | null> {
    const t0 = monotonicMs();
    const base = { scanner: this.#o.key };
    const read: HandedRead = {};
    // The scanner as the recognizer sees it, keeping what it read in case a session takes it.
    const recording: RecognizedScanner = {
      modality: scanner.modality,
      capabilities: scanner.capabilities,
      captureImage: async () => (read.image = await scanner.captureImage()),
      searchOnModule: () => scanner.searchOnModule(),
      ...(scanner.readCredential ? { readCredential: async () => (read.badge = await scanner.readCredential!()) } : {}),
    };
    let ident: Recognition | null;
    try {
      ident = await this.#o.recognizer.recognize(recording, this.#o.key);
    } catch (err) {
      const e = toAgentError(err, 'AGENT_CAPTURE');
      if (isScannerGone(e.code)) throw e;
      if (this.#paused > 0) return null;
      await this.#feedback(scanner, 'try-again');
      this.#log.info({ code: e.code, err: e.message }, 'capture not usable; asked to try again');
      return {
        ...base,
        path: null,
        employeeCode: null,
        score: null,
        result: 'try-again',
        latencyMs: monotonicMs() - t0,
        detail: `${e.code}: ${e.message}`,
      };
    }
    // A session took the scanner while this was read. A person still at the scanner is the
    // session's: the read is handed to it. A finger or an eye already gone was presented by someone
    // who left before the session asked (the next person's enrolment must not get their image):
    // the read stays that person's punch, without a second-finger step.
    let left = false;
    if (this.#paused > 0) {
      left = read.image !== undefined && !(await scanner.waitForPresence({ timeoutMs: 0 }).catch(() => true));
      if (!left) {
        this.#handed = read;
        this.#log.info(
          { read: read.badge ? 'badge' : read.image ? 'image' : 'presence' },
          'capture handed to the session that took the scanner; not a punch',
        );
        return null;
      }
      this.#log.info('the person read had left when a session took the scanner: their read is not handed to it, it is their punch');
    }
    let second: { result: NonNullable<CaptureOutcome['secondFinger']>; detail?: string } | null = null;
    const between = this.#o.secondFinger && !left ? secondFingerWanted(ident, this.#o.secondFinger) : null;
    if (between && ident?.probe && scanner.capabilities.image) {
      // Two people close: another finger decides, among them only (second-finger.ts).
      const recognizer = this.#o.recognizer;
      const step = await runSecondFinger({
        scanner,
        first: ident.probe,
        between,
        timeoutMs: this.#o.secondFinger!.timeoutMs,
        sameFingerScore: this.#o.secondFinger!.sameFingerScore,
        extract: (image) => recognizer.template('finger', image),
        identifyAmong: (templates, among) => recognizer.among('finger', templates, among),
        feedback: (kind) => this.#feedback(scanner, kind),
        progress: (e) => this.#log.info({ ...e, message: undefined }, String(e.message)),
        signal: this.#abort.signal,
      });
      // A session took the scanner meanwhile: nothing is punched, the person is shown nothing here.
      if (this.#paused > 0) return null;
      second = { result: step.result, ...(step.detail ? { detail: step.detail } : {}) };
      ident = step.identification ?? { ...ident, decision: 'reject', employeeCode: null, templateId: null };
    }
    if (ident?.decision !== 'accept' || !ident.employeeCode) {
      await this.#feedback(scanner, 'unknown');
      return {
        ...base,
        path: ident?.path ?? null,
        employeeCode: null,
        score: ident?.score ?? null,
        ...(ident?.needed !== undefined ? { needed: ident.needed } : {}),
        result: 'unknown',
        latencyMs: monotonicMs() - t0,
        ...(scanner.capabilities.credential ? { detail: 'badge not enrolled' } : {}),
        ...(second ? { secondFinger: second.result, ...(second.detail ? { detail: second.detail } : {}) } : {}),
      };
    }
    const { employeeCode, path, score } = ident;
    const verdict = await this.#o.punch.verdictFor({ employeeCode, source: scanner.modality, score });
    const latencyMs = monotonicMs() - t0;
    if (verdict.result === 'refused') this.#log.error({ err: verdict.detail, employeeCode }, 'the punch could not be recorded');
    await this.#feedback(scanner, FEEDBACK[verdict.result]);
    return {
      ...base,
      path,
      employeeCode,
      score,
      result: verdict.result,
      ...(verdict.direction ? { direction: verdict.direction } : {}),
      ...(second ? { secondFinger: second.result } : {}),
      latencyMs,
      ...(verdict.detail ? { detail: verdict.detail } : {}),
    };
  }
}
