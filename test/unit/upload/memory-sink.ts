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

  constructor(name = 'api') {
    this.name = name;
  }

  async deliver(items: readonly OutboxItem[], options: DeliverOptions): Promise<ItemOutcome[]> {
    this.batches.push(items.length);
    if (this.failWith) throw this.failWith;
    if (this.hold) {
      await new Promise<void>((resolve, reject) => {
        options.signal.addEventListener('abort', () => reject(new AgentError('CORE_ABORTED', 'aborted')), { once: true });
        void this.hold!.then(resolve);
      });
    }
    return items.map((item) => {
      if (this.unknown.has(item.employeeCode)) return { outcome: 'dead', status: 'USER_NOT_AVAILABLE', description: `user ${item.employeeCode} not found` };
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
