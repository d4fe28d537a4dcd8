import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../src/core/atomic-file.js';

const dir = mkdtempSync(join(tmpdir(), 'atomic-file-test-'));

describe('atomic file', () => {
  it('writes exactly the mode asked for, whatever the umask', () => {
    const old = process.umask(0o077);
    try {
      const f = join(dir, 'cfg.yaml');
      writeFileAtomic(f, 'a: 1\n', 0o644);
      expect(statSync(f).mode & 0o777).toBe(0o644);
    } finally {
      process.umask(old);
    }
  });
});
