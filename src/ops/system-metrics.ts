/** What the operating system says about this terminal: memory, disk, CPU temperature, throttling. */
import { readFile, statfs } from 'node:fs/promises';

export interface SystemMetrics {
  rssMb: number;
  heapUsedMb: number;
  freeDiskMb: number | null;
  cpuTempC: number | null;
  /**
   * A Raspberry Pi's firmware throttling bits (what `vcgencmd get_throttled` prints): 0x1 under-
   * voltage now, 0x2 frequency capped now, 0x4 throttled now, 0x8 soft temperature limit now, and
   * 0x10000, 0x20000, 0x40000, 0x80000 the same since boot. 0 is healthy; null off a Pi.
   */
  throttled: number | null;
  uptimeSec: number;
  loadAvg1: number;
}

export async function freeDiskMb(path: string): Promise<number | null> {
  try {
    const s = await statfs(path);
    return Math.round((Number(s.bavail) * Number(s.bsize)) / 1048576);
  } catch {
    return null;
  }
}

/** CPU temperature where readable (`/sys/class/thermal/thermal_zone0/temp`, millidegrees). */
export async function cpuTemperatureC(file = '/sys/class/thermal/thermal_zone0/temp'): Promise<number | null> {
  try {
    const v = Number((await readFile(file, 'utf8')).trim());
    return Number.isFinite(v) ? Math.round(v / 100) / 10 : null;
  } catch {
    return null;
  }
}

/** The firmware's throttling bits where the Pi kernel exposes them (hex, with or without 0x). */
export async function throttledFlags(file = '/sys/devices/platform/soc/soc:firmware/get_throttled'): Promise<number | null> {
  try {
    const text = (await readFile(file, 'utf8')).trim().replace(/^throttled=/, '');
    return /^(0x)?[0-9a-fA-F]+$/.test(text) ? parseInt(text.replace(/^0x/, ''), 16) : null;
  } catch {
    return null;
  }
}

/** `VmRSS` of a `/proc/<pid>/status` text, in bytes; null when absent. */
export function vmRssBytes(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * The resident set in bytes. Node reads it from `/proc/self/stat`, which qemu-user (an arm64
 * build checked on an x86 machine) fills with zeros; `/proc/self/status` still has `VmRSS`.
 */
export async function residentBytes(rss = process.memoryUsage.rss(), statusFile = '/proc/self/status'): Promise<number> {
  if (rss > 0) return rss;
  try {
    return vmRssBytes(await readFile(statusFile, 'utf8')) ?? 0;
  } catch {
    return 0;
  }
}

export async function systemMetrics(dataDir: string): Promise<SystemMetrics> {
  const mem = process.memoryUsage();
  const { loadavg } = await import('node:os');
  return {
    rssMb: Math.round(((await residentBytes(mem.rss)) / 1048576) * 10) / 10,
    heapUsedMb: Math.round((mem.heapUsed / 1048576) * 10) / 10,
    freeDiskMb: await freeDiskMb(dataDir),
    cpuTempC: await cpuTemperatureC(),
    throttled: await throttledFlags(),
    uptimeSec: Math.round(process.uptime()),
    loadAvg1: Math.round(loadavg()[0]! * 100) / 100,
  };
}
