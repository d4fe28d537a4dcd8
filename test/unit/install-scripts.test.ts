/**
 * Every dependency whose install script the agent needs is approved in package.json's
 * `allowScripts`. npm 11.19 warns that dependencies' install scripts "not yet covered by
 * allowScripts" will be skipped, and its documentation already calls them blocked by default: a
 * later npm would then install sqlite3, node-hid, serialport's bindings and onnxruntime-node without
 * their native parts, and `npm install && npm start` would fail at the first database or device.
 * Older npm (Node 20's 10.x) ignores the field. A dependency added or replaced with an install
 * script of its own fails this test until it is reviewed (`npm install-scripts approve <pkg>`).
 *
 * Tests: package.json (allowScripts) against package-lock.json
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const json = (path: string) => JSON.parse(readFileSync(`${ROOT}${path}`, 'utf8')) as Record<string, unknown>;

/** The names of the locked packages that have an install script (`hasInstallScript` in the lock file). */
function withInstallScripts(): string[] {
  const packages = json('package-lock.json').packages as Record<string, { hasInstallScript?: boolean }>;
  const names = new Set<string>();
  for (const [path, entry] of Object.entries(packages)) {
    if (!entry.hasInstallScript || path === '') continue;
    names.add(path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }
  return [...names].sort();
}

describe('install scripts', () => {
  it('approves every locked dependency with an install script, and the native ones the agent needs are among them', () => {
    const allowed = (json('package.json').allowScripts ?? {}) as Record<string, boolean>;
    const needed = withInstallScripts();
    expect(needed).toEqual(expect.arrayContaining(['sqlite3', 'node-hid', '@serialport/bindings-cpp', 'onnxruntime-node']));
    expect(needed.filter((name) => allowed[name] !== true)).toEqual([]);
  });

  it('approves nothing that the lock file does not install with a script', () => {
    const allowed = Object.keys((json('package.json').allowScripts ?? {}) as Record<string, boolean>);
    const needed = new Set(withInstallScripts());
    expect(allowed.filter((name) => !needed.has(name))).toEqual([]);
  });
});
