import { describe, expect, it } from 'vitest';
import { sleep, withTimeout } from '../../../src/core/time.js';

describe('time', () => {
  it('times out a slow promise with a retryable error', async () => {
    await expect(withTimeout(sleep(200), 10)).rejects.toMatchObject({ code: 'CORE_TIMEOUT', retryable: true });
  });
  it('aborts a sleep', async () => {
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'CORE_ABORTED' });
  });
});
