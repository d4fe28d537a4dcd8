/**
 * The kernel's boot id (`/proc/sys/kernel/random/boot_id`): monotonic clock readings are only
 * comparable between punches of the same boot. Where the file does not exist (not Linux, a
 * sandbox) a random id per process stands in, so a correction never spans processes it cannot
 * prove share a clock.
 *
 * Tests simulate a reboot by pointing `EDGE_AGENT_TEST_BOOT_ID_FILE` at a file of their own
 * (read once per process, like the kernel's); nothing else sets it.
 *
 * Tested in test/integration/clock-e2e.test.ts (a reboot is a new boot id: punches of an earlier
 * boot corrected or held) and test/unit/terminal/time-authority.test.ts.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';

export const KERNEL_BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

let cached: string | null = null;

export function currentBootId(): string {
  if (cached) return cached;
  try {
    cached = readFileSync(process.env.EDGE_AGENT_TEST_BOOT_ID_FILE || KERNEL_BOOT_ID_FILE, 'utf8').trim() || null;
  } catch {
    cached = null;
  }
  cached ??= `process-${randomUUID()}`;
  return cached;
}
