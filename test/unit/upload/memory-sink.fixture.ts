/** An in-memory sink for unit tests of the uploader (one layer): records what it was handed. */
import { AgentError } from '../../../src/core/errors.js';
import type { OutboxItem } from '../../../src/store/outbox.js';
import type { DeliverOptions, ItemOutcome, Sink } from '../../../src/upload/sink.js';

export class MemorySink implements Sink {
  readonly name: string;
  /** Every delivered item, in the order it was accepted (duplicates included). */
  readonly accepted: OutboxItem[] = [];
  /** Sizes of the batches handed over. */
  readonly batches: number[] = [];
  /** Employee codes refused for good (USER_NOT_AVAILABLE). */
  readonly unknown = new Set<string>();
  /** Per employee code: how many more times to answer ERROR. */
  readonly errorsFor = new Map<string, number>();
  /** When set, the whole request fails with this error. */
  failWith: AgentError | null = null;
  /** When set, deliver waits for this promise (or the abort) before answering. */
  hold: Promise<void> | null = null;
  /** Each deliver takes this long (so batches overlap in a pipelined uploader). */
  delayMs = 0;
  /** Most batches seen in flight at once, and employees seen in two batches in flight at once. */
  maxInFlight = 0;
  readonly overlaps: string[] = [];
  readonly #inFlight = new Map<string, number>();
  #flights = 0;

  constructor(name = 'api') {
    this.name = name;
  }

  async deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    this.batches.push(items.length);
    if (this.failWith) throw this.failWith;
    this.#flights++;
    this.maxInFlight = Math.max(this.maxInFlight, this.#flights);
    for (const i of items) {
      const n = this.#inFlight.get(i.employeeCode) ?? 0;
      if (n > 0) this.overlaps.push(i.employeeCode);
      this.#inFlight.set(i.employeeCode, n + 1);
    }
    try {
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      return await this.#answer(items, options);
    } finally {
      this.#flights--;
      for (const i of items) this.#inFlight.set(i.employeeCode, this.#inFlight.get(i.employeeCode)! - 1);
    }
  }

  async #answer(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    if (this.hold) {
      await new Promise<void>((resolve, reject) => {
        options.signal.addEventListener('abort', () => reject(new AgentError('CORE_ABORTED', 'aborted')), { once: true });
        void this.hold!.then(resolve);
      });
    }
    return items.map((item) => {
      if (this.unknown.has(item.employeeCode))
        return { outcome: 'dead', status: 'USER_NOT_AVAILABLE', description: `user ${item.employeeCode} not found` };
      const errors = this.errorsFor.get(item.employeeCode) ?? 0;
      if (errors > 0) {
        this.errorsFor.set(item.employeeCode, errors - 1);
        return { outcome: 'retry', status: 'ERROR', description: 'system error' };
      }
      this.accepted.push(item);
      return { outcome: 'delivered' };
    });
  }

  async close(): Promise<void> {}
}
