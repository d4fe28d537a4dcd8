import { AgentError } from '../../../src/core/errors.js';
import { TypedEmitter } from '../../../src/core/events.js';
import type { CapturedImage, Feedback, ModuleSearchResult, Scanner, ScannerEvents, ScannerInfo } from '../../../drivers/scanner.js';

/** An in-memory fingerprint module for the terminal's unit tests (the drivers have their own simulators): the finger
 * pressed is a number, and its image's one pixel. */
export class FakeScanner extends TypedEmitter<ScannerEvents> implements Scanner {
  readonly family = 'r30x' as const;
  readonly modality = 'finger' as const;
  readonly capabilities = { image: true, moduleSearch: true, moduleEnroll: false, feedback: true };
  present: number | null = null;
  slots = new Map<number, number>();
  feedbacks: Feedback[] = [];
  failImage = false;
  unplugged = false;
  opens = 0;
  readonly #info: ScannerInfo = {
    family: 'r30x',
    modality: 'finger',
    model: 'fake',
    firmware: null,
    serial: null,
    transport: 'memory',
    path: 'fake',
    baud: null,
    capacity: 10,
    templates: 0,
    image: null,
    resolution: { kind: 'dpi', dpi: 500 },
  };
  async open() {
    if (this.unplugged) throw new AgentError('TRANSPORT_NOT_FOUND', 'unplugged');
    this.opens++;
    return this.#info;
  }
  async close() {}
  async info() {
    return this.#info;
  }
  /** Resolved when the worker next looks and finds no finger (so a lift has been seen). */
  #absenceSeen: Array<() => void> = [];
  async waitForPresence({ timeoutMs }: { timeoutMs: number }) {
    if (this.unplugged) throw new AgentError('TRANSPORT_DISCONNECTED', 'gone');
    if (this.present !== null) return true;
    await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 20)));
    if (this.present === null) for (const f of this.#absenceSeen.splice(0)) f();
    return false;
  }
  async captureImage(): Promise<CapturedImage> {
    if (this.failImage) throw new AgentError('DRIVER_LOW_QUALITY', 'smudged');
    return { width: 1, height: 1, pixels: new Uint8Array([this.present ?? 0]), sourceBitsPerPixel: 8, dpi: 500, quality: null };
  }
  async searchOnModule(): Promise<ModuleSearchResult | null> {
    for (const [slot, finger] of this.slots) if (finger === this.present) return { slot, score: 120 };
    return null;
  }
  async enrollOnModule(): Promise<never> {
    throw new AgentError('DRIVER_UNSUPPORTED', 'no');
  }
  async storeOnModule() {}
  async readFromModule(): Promise<never> {
    throw new AgentError('DRIVER_UNSUPPORTED', 'no');
  }
  async deleteOnModule() {}
  async clearModule() {}
  async usedSlots() {
    return [...this.slots.keys()];
  }
  async feedback(kind: Feedback) {
    this.feedbacks.push(kind);
  }
  lift() {
    this.present = null;
  }
  /** Lifts the finger and resolves once the worker has seen it gone (a new press is a new press). */
  liftSeen(): Promise<void> {
    this.present = null;
    return new Promise((r) => this.#absenceSeen.push(r));
  }
}
