/**
 * The kernel's boot id (`/proc/sys/kernel/random/boot_id`): monotonic clock readings are only
 * comparable between punches of the same boot. Where the file does not exist (not Linux, a
 * sandbox) a random id per process stands in, so a correction never spans processes it cannot
 * prove share a clock.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';

let cached: string | null = null;

export function currentBootId(): string {
  if (cached) return cached;
  try {
    cached = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    cached = null;
  }
  cached ??= `process-${randomUUID()}`;
  return cached;
}
