/**
 * Finds scanners: lists serial ports (serialport's list, which needs udevadm, plus a scan of /dev
 * for ttyUSB*, ttyACM*, ttyAMA*, serial0/1 so it works where udevadm is missing) and HID devices
 * (node-hid), then asks each port every registered family of its kind (families.ts). Serial ports
 * are probed at each family's baud rates, most likely first (its `probeBauds`), interleaved:
 *
 *   r30x  57600, then 9600, 19200, 38400, 115200
 *   gt521 9600, then 19200, 38400, 57600, 115200
 *
 * Each probe waits a few hundred ms, so a port where nothing known answers is declared empty
 * within a few seconds. Ports are probed in parallel.
 */
import { existsSync, readdirSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { isAgentError, type AgentError } from '../src/core/errors.js';
import { logger } from '../src/core/logger.js';
import type { ScannerFamily } from './scanner.js';
import type { ProbeFound } from './family.js';
import { familiesOn } from './families.js';

const log = logger('drivers:discovery');

export interface DiscoveredDevice {
  path: string;
  transport: 'serial' | 'hid';
  family: ScannerFamily;
  model: string;
  firmware: string | null;
  capacity: number | null;
  templates: number | null;
  baud: number | null;
}

export interface PortReport {
  path: string;
  transport: 'serial' | 'hid';
  /** What answered, or null. */
  device: DiscoveredDevice | null;
  /** Why the port could not be probed (not found, permission), when that happened. */
  error: AgentError | null;
  /** Family@baud combinations tried. */
  tried: string[];
  ms: number;
}

export interface DiscoveryOptions {
  /** Probe only this port. */
  port?: string;
  /** Probe only at this baud rate. */
  baud?: number;
  /** Per-probe answer timeout (ms). */
  timeoutMs?: number;
}

export interface Probe {
  family: ScannerFamily;
  bauds: readonly number[];
  run(path: string, baud: number, timeoutMs: number): Promise<ProbeFound | null>;
}

/** The serial families' probes, from the registry: those that can be probed (a badge reader says nothing until a card is read). */
function serialProbes(): Probe[] {
  return familiesOn('serial')
    .filter((e) => e.probeable !== false)
    .map((e) => ({ family: e.family, bauds: e.probeBauds, run: (path, baud, timeoutMs) => e.probe(path, { baud, timeoutMs }) }));
}

/** Serial ports on this machine: serialport's list (udev) merged with a scan of /dev. */
export async function listSerialPorts(): Promise<string[]> {
  const found = new Set<string>();
  try {
    for (const p of await SerialPort.list()) found.add(p.path);
  } catch (err) {
    log.debug({ err: String(err) }, 'serialport list failed (no udevadm?); scanning /dev');
  }
  try {
    for (const name of readdirSync('/dev')) {
      if (/^(ttyUSB\d+|ttyACM\d+|ttyAMA\d+|serial\d)$/.test(name)) found.add(`/dev/${name}`);
    }
  } catch {
    // no /dev: nothing more to find
  }
  // serial0 and ttyAMA0 are often the same UART: keep both, probing is harmless.
  return [...found].filter((p) => existsSync(p)).sort();
}

export interface HidDeviceSummary {
  path: string;
  vendorId: number;
  productId: number;
  product: string | null;
}

/** HID devices (node-hid); empty when node-hid cannot enumerate (no hidraw access). */
export async function listHidDevices(): Promise<HidDeviceSummary[]> {
  try {
    const hid = (await import('node-hid')) as unknown as {
      devices(): Array<{ path?: string; vendorId: number; productId: number; product?: string }>;
    };
    return hid
      .devices()
      .filter((d) => d.path)
      .map((d) => ({ path: d.path!, vendorId: d.vendorId, productId: d.productId, product: d.product ?? null }));
  } catch (err) {
    log.debug({ err: String(err) }, 'HID enumeration failed');
    return [];
  }
}

/** Probes one serial port with every known protocol; the first answer wins. */
export async function probeSerialPort(
  path: string,
  options: { baud?: number; timeoutMs?: number; probes?: Probe[] } = {},
): Promise<PortReport> {
  const t0 = performance.now();
  const probes = options.probes ?? serialProbes();
  const timeoutMs = options.timeoutMs ?? 250;
  // Interleave the families by likelihood: each family's first baud, then the rest.
  const plan: Array<[Probe, number]> = [];
  if (options.baud) for (const p of probes) plan.push([p, options.baud]);
  else {
    const depth = Math.max(...probes.map((p) => p.bauds.length));
    for (let i = 0; i < depth; i++) for (const p of probes) if (p.bauds[i]) plan.push([p, p.bauds[i]!]);
  }
  const tried: string[] = [];
  for (const [probe, baud] of plan) {
    tried.push(`${probe.family}@${baud}`);
    try {
      const found = await probe.run(path, baud, timeoutMs);
      if (found) {
        return {
          path,
          transport: 'serial',
          device: { path, transport: 'serial', family: probe.family, baud, ...found },
          error: null,
          tried,
          ms: performance.now() - t0,
        };
      }
    } catch (err) {
      if (isAgentError(err) && err.code.startsWith('TRANSPORT_')) {
        return { path, transport: 'serial', device: null, error: err, tried, ms: performance.now() - t0 };
      }
      log.debug({ path, baud, family: probe.family, err: String(err) }, 'probe failed');
    }
  }
  return { path, transport: 'serial', device: null, error: null, tried, ms: performance.now() - t0 };
}

/** Every port with what answered on it (or why nothing could). */
export async function discoverPorts(options: DiscoveryOptions = {}): Promise<PortReport[]> {
  const paths = options.port ? [options.port] : await listSerialPorts();
  const reports = await Promise.all(
    paths.map((p) =>
      probeSerialPort(p, {
        ...(options.baud ? { baud: options.baud } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      }),
    ),
  );
  if (!options.port) {
    const hids = await listHidDevices();
    const found = await Promise.all(
      hids.map(async (h) => {
        const t0 = performance.now();
        const { device, tried } = await probeHid(h);
        return { path: h.path, transport: 'hid' as const, device, error: null, tried, ms: performance.now() - t0 };
      }),
    );
    reports.push(...found);
  }
  return reports;
}

/** The devices that answered a known protocol. */
export async function discoverDevices(options: DiscoveryOptions = {}): Promise<DiscoveredDevice[]> {
  return (await discoverPorts(options)).flatMap((r) => (r.device ? [r.device] : []));
}

/** Identifies a HID device with the HID families' probes; the first answer wins. */
async function probeHid(h: HidDeviceSummary): Promise<{ device: DiscoveredDevice | null; tried: string[] }> {
  const tried: string[] = [];
  for (const family of familiesOn('hid').filter((e) => e.probeable !== false)) {
    tried.push(family.family);
    try {
      const found = await family.probe(h.path);
      if (found) return { device: { path: h.path, transport: 'hid', family: family.family, baud: null, ...found }, tried };
    } catch (err) {
      log.debug({ path: h.path, family: family.family, err: String(err) }, 'HID probe failed');
    }
  }
  return { device: null, tried };
}
