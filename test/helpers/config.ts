/** What the configuration's tests share: config files in a temp folder, and the error a call throws. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AgentError } from '../../src/core/errors.js';

/** A writer of numbered config files (`c0.yaml`, `c1.json`, ...) in a new temp folder; `dir` is that folder. */
export function configFiles(prefix: string): { dir: string; file: (text: string, ext?: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let n = 0;
  return {
    dir,
    file: (text, ext = 'yaml') => {
      const f = join(dir, `c${n++}.${ext}`);
      writeFileSync(f, text);
      return f;
    },
  };
}

/** The AgentError `fn` throws; the test fails when it throws something else or nothing. */
export function failure(fn: () => unknown): AgentError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected an error');
}
