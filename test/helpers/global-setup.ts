/**
 * Vitest global setup: builds the CLI the tests' children run (test-build.ts), gives the run an id (each test file's sandbox folder carries it, see
 * sandbox.ts) and, at the end, checks the temp folder. A sandbox of this run still there is
 * removed; anything new that looks like a test's folder (made outside a sandbox) is named, so the
 * test that left it can be fixed.
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SANDBOX_PREFIX } from './sandbox.js';
import { buildForTests } from './test-build.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Names the tests and the programs they start give their temporary folders. */
const LITTER = /^(pty-|sim-pty-|agent-e2e-|notify-|mosquitto-|mqtt-tls-|wizard-|provision-|prefix-|unit-|embedded-|harness-|mat-debug-)/;

export default function setup(): () => void {
  // The CLI the test files' children run, built before any of them starts (test-build.ts).
  if (process.env.EDGE_AGENT_TEST_CLI !== 'sources') {
    const built = buildForTests(ROOT);
    process.env.EDGE_AGENT_TEST_CLI_BUILD = join(ROOT, built.dir);
  }
  const root = tmpdir();
  const run = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  process.env.EDGE_AGENT_TEST_RUN = run;
  const before = new Set(readdirSync(root));
  return () => {
    const ours = `${SANDBOX_PREFIX}${run}-`;
    // Sandboxes whose file ran no hooks (all its tests skipped) or whose worker crashed (vitest
    // reports that itself).
    for (const n of readdirSync(root).filter((n) => n.startsWith(ours))) rmSync(join(root, n), { recursive: true, force: true });
    const left = readdirSync(root).filter((n) => !before.has(n) && LITTER.test(n));
    if (left.length)
      console.warn(
        `temp folders: new in ${root} during the run, made outside a test's sandbox (another process, or a test that passes its own TMPDIR): ${left.join(', ')}`,
      );
  };
}
