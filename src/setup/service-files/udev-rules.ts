/**
 * The udev rules shipped in `systemd/`, rendered for a terminal: one line per iris camera model
 * and one per scanner's USB serial bridge, read from sysfs and named `/dev/fingerprintN`.
 *
 * Tested in test/integration/systemd-unit.test.ts (no bridge named by its make alone, the Pi UART, a
 * scanner bridge by serial number or USB port from a fake sysfs, an iris model through --iris-usb).
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AgentError } from '../../core/errors.js';

/** The USB bridge behind a serial port, from sysfs: what a udev rule can name it by. */
export interface UsbSerialAdapter {
  /** The port as given (`/dev/ttyUSB0`) and its kernel name (`ttyUSB0`). */
  port: string;
  kernel: string;
  vendor: string;
  product: string;
  /** The bridge's serial number; null for bridges without one (CH340). */
  serial: string | null;
  /** The USB device's name in sysfs (`1-1.3`): the physical port it is plugged into. */
  usbPath: string;
}

function readAttr(dir: string, name: string): string | null {
  try {
    return readFileSync(join(dir, name), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Reads a serial port's USB bridge from sysfs; null when the port is not on USB (a pty, the Pi UART). */
export function usbAdapterOf(port: string, sysfsRoot = '/sys'): UsbSerialAdapter | null {
  let kernel = basename(port);
  try {
    kernel = basename(realpathSync(port));
  } catch {
    // a name only (tests, a port not plugged in): taken as the kernel name
  }
  let dir: string;
  try {
    dir = realpathSync(join(sysfsRoot, 'class/tty', kernel, 'device'));
  } catch {
    return null;
  }
  for (let i = 0; i < 6 && dir.startsWith(sysfsRoot) && dir !== sysfsRoot; i++, dir = dirname(dir)) {
    const vendor = readAttr(dir, 'idVendor');
    const product = readAttr(dir, 'idProduct');
    if (vendor && product)
      return {
        port,
        kernel,
        vendor: vendor.toLowerCase(),
        product: product.toLowerCase(),
        serial: readAttr(dir, 'serial'),
        usbPath: basename(dir),
      };
  }
  return null;
}

/** Every USB serial bridge plugged in now (ttyUSB*, ttyACM*), for the technician to choose from. */
export function listUsbSerialAdapters(sysfsRoot = '/sys'): UsbSerialAdapter[] {
  let names: string[] = [];
  try {
    names = readdirSync(join(sysfsRoot, 'class/tty'))
      .filter((n) => /^tty(USB|ACM)\d+$/.test(n))
      .sort();
  } catch {
    return [];
  }
  return names.flatMap((n) => usbAdapterOf(`/dev/${n}`, sysfsRoot) ?? []);
}

/** The udev line naming one scanner's bridge `/dev/fingerprintN`: by serial number, else by USB port. */
export function fingerprintRule(a: UsbSerialAdapter, index: number): string {
  const by = a.serial ? `ATTRS{serial}=="${a.serial.replace(/["\\]/g, '')}"` : `KERNELS=="${a.usbPath}"`;
  return `SUBSYSTEM=="tty", ATTRS{idVendor}=="${a.vendor}", ATTRS{idProduct}=="${a.product}", ${by}, SYMLINK+="fingerprint${index}", GROUP="dialout", MODE="0660", ENV{ID_MM_DEVICE_IGNORE}="1"`;
}

/**
 * The udev rules with one line per iris camera model at the `@iris-rules@` marker and one line per
 * scanner's USB bridge (by serial number) at the `@fingerprint-rules@` marker.
 */
export function renderRules(
  template: string,
  group: string,
  irisUsb: readonly string[] = [],
  scanners: readonly UsbSerialAdapter[] = [],
): string {
  const lines = irisUsb.map((id) => {
    const m = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(id.trim());
    if (!m)
      throw new AgentError(
        'CLI_USAGE',
        `--iris-usb ${id} is not a USB id pair VVVV:PPPP`,
        { value: id },
        { hint: 'take the ids from "edge-agent devices" or lsusb, e.g. --iris-usb 1d6b:0104' },
      );
    return `SUBSYSTEM=="hidraw", ATTRS{idVendor}=="${m[1]!.toLowerCase()}", ATTRS{idProduct}=="${m[2]!.toLowerCase()}", SYMLINK+="iris%n", GROUP="${group}", MODE="0660"`;
  });
  const fingers = scanners.map((a, i) => fingerprintRule(a, i));
  return template
    .replace(/GROUP="edge-agent"/g, `GROUP="${group}"`)
    .replace(/^# @iris-rules@$/m, lines.length ? lines.join('\n') : '# @iris-rules@')
    .replace(/^# @fingerprint-rules@$/m, fingers.length ? fingers.join('\n') : '# @fingerprint-rules@');
}
