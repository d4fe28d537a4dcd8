import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { residentBytes, systemMetrics, vmRssBytes } from '../../../src/ops/system-metrics.js';

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

  it('publishes a resident set above zero for this process', async () => {
    expect(vmRssBytes(readFileSync('/proc/self/status', 'utf8'))).toBeGreaterThan(0);
    expect((await systemMetrics(tmpdir())).rssMb).toBeGreaterThan(0);
  });
});
