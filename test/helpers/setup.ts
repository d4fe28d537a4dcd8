/**
 * Vitest setup file, run before each test file: quiet logs, a temp folder of its own, and after
 * the file no process and no folder left behind (leak guard first, so nothing writes into the
 * folder while it is removed).
 */
import { afterAll } from 'vitest';
import { muteLogging } from '../../src/core/logger.js';
import { sweepLeaks } from './leak-guard.js';
import { enterSandbox, leaveSandbox } from './sandbox.js';

// The suite prints the reporter and nothing else; EDGE_AGENT_TEST_LOGS=1 shows the logs of the
// test processes (and the output of the children they start, see captureOutput in cli.ts).
if (process.env.EDGE_AGENT_TEST_LOGS !== '1') muteLogging();

enterSandbox();

afterAll(async () => {
  await sweepLeaks();
  leaveSandbox();
});
