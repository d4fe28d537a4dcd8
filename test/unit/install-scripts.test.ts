/**
 * Every dependency with an install script is reviewed in package.json's `allowScripts`. npm 11.19
 * warns that scripts "not yet covered by allowScripts" will be skipped, and its documentation
 * already calls them blocked by default: a later npm would install sqlite3, node-hid and
 * serialport's bindings without their native parts, and `npm install && npm start` would fail at
 * the first database or device. Those are approved. onnxruntime-node's script only downloads its
 * CUDA libraries from nuget.org on linux/x64 (the CPU binaries are in the package, and the agent
 * runs on CPU): denied, so a fresh install offline works without `.npmrc`'s
 * onnxruntime-node-install=skip, a key npm says it will stop passing on (the line stays for older
 * npm, Node 20's 10.x, which ignores allowScripts and runs every script). protobufjs's (under
 * onnx-proto) only makes a folder for its CLI, which nothing here runs: denied. A dependency added
 * or replaced with an install script of its own fails this test until it is reviewed
 * (`npm install-scripts approve <pkg>` or `deny <pkg>`).
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
  it('reviews every locked dependency with an install script: the native ones approved, the CUDA download denied', () => {
    const allowed = (json('package.json').allowScripts ?? {}) as Record<string, boolean>;
    const scripted = withInstallScripts();
    expect(scripted.filter((name) => typeof allowed[name] !== 'boolean')).toEqual([]);
    for (const name of ['sqlite3', 'node-hid', '@serialport/bindings-cpp', 'esbuild']) {
      expect(scripted).toContain(name);
      expect(allowed[name], name).toBe(true);
    }
    expect(allowed['onnxruntime-node']).toBe(false);
  });

  it('names nothing that the lock file does not install with a script', () => {
    const allowed = Object.keys((json('package.json').allowScripts ?? {}) as Record<string, boolean>);
    const scripted = new Set(withInstallScripts());
    expect(allowed.filter((name) => !scripted.has(name))).toEqual([]);
  });
});
