import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { residentBytes, systemMetrics, throttledFlags, vmRssBytes } from '../../../src/ops/system-metrics.js';

describe('system metrics', () => {
  it('reads VmRSS from a /proc status text', () => {
    expect(vmRssBytes('Name:\tnode\nVmPeak:\t  900000 kB\nVmRSS:\t   51200 kB\nRssAnon:\t 40000 kB\n')).toBe(51200 * 1024);
    expect(vmRssBytes('Name:\tnode\n')).toBeNull();
  });

  it('falls back to /proc/self/status when Node reports an RSS of 0 (qemu-user)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'status-')), 'status');
    writeFileSync(file, 'Name:\tnode\nVmRSS:\t   51200 kB\n');
    expect(await residentBytes(0, file)).toBe(51200 * 1024);
    expect(await residentBytes(7_000_000, file)).toBe(7_000_000);
    expect(await residentBytes(0, join(file, 'missing'))).toBe(0);
  });

  it("reads a Pi firmware's throttling bits, and null where there are none", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'throttled-'));
    writeFileSync(join(dir, 'a'), '50005\n');
    writeFileSync(join(dir, 'b'), '0x0\n');
    writeFileSync(join(dir, 'c'), 'garbage\n');
    expect(await throttledFlags(join(dir, 'a'))).toBe(0x50005);
    expect(await throttledFlags(join(dir, 'b'))).toBe(0);
    expect(await throttledFlags(join(dir, 'c'))).toBeNull();
    expect(await throttledFlags(join(dir, 'missing'))).toBeNull();
  });

  it('publishes a resident set above zero for this process', async () => {
    expect(vmRssBytes(readFileSync('/proc/self/status', 'utf8'))).toBeGreaterThan(0);
    expect((await systemMetrics(tmpdir())).rssMb).toBeGreaterThan(0);
  });
});
