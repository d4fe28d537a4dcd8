/**
 * The scanner checks: each configured scanner answers, or (while the agent runs and holds the
 * ports) the agent's own view of it; a failed probe gets the hint that most likely fits.
 */
import type { ScannerConfig } from '../../config/config.js';
import { type CheckResult, fail, fromError, pass, warn } from './check.js';

/** Opens a scanner and asks what it is; the driver's `openScanner` is passed in. */
export type ScannerProbe = (scanner: ScannerConfig) => Promise<{ model: string; firmware: string | null; serial: string | null }>;

/** A scanner as the running agent reports it (control socket `status`). */
export interface HeldScanner {
  key: string;
  status: string;
  model?: string | null;
}

/** The key the agent gives a configured scanner (`family:path`, `sim:family`). */
export function heldScannerKey(s: ScannerConfig): string {
  return s.path === 'sim' ? `sim:${s.family}` : `${s.family}:${s.path}`;
}

/**
 * Opens each scanner and asks what it is; while the agent runs it holds the ports, so the
 * agent's own view (`held`, from its control socket) is judged instead.
 */
export async function checkScanners(
  scanners: readonly ScannerConfig[],
  probe: ScannerProbe | null,
  options: { simulate?: boolean; daemonRunning?: boolean; held?: HeldScanner[] | null } = {},
): Promise<CheckResult[]> {
  if (!scanners.length) {
    return [
      warn(
        'scanners',
        options.simulate ? 'no scanners configured; the agent runs simulated scanners (simulate: true)' : 'no scanners configured',
        'add them with "edge-agent provision --scanner family:path[:baud]"',
      ),
    ];
  }
  const out: CheckResult[] = [];
  for (const s of scanners) {
    const name = `scanner ${s.family}:${s.path}`;
    if (options.daemonRunning) {
      const view = options.held?.find((h) => h.key === heldScannerKey(s));
      if (!view)
        out.push(
          warn(
            name,
            'not opened: the running agent holds the scanners and did not report this one',
            'stop the agent (systemctl stop edge-agent) to test the scanner directly',
          ),
        );
      else if (view.status === 'ready') out.push(pass(name, `answers (through the running agent)${view.model ? `: ${view.model}` : ''}`));
      else
        out.push(
          fail(
            name,
            `the running agent cannot use it: ${view.status}`,
            `check the cable and power; journalctl -u edge-agent shows why (ls -l ${s.path})`,
          ),
        );
      continue;
    }
    if (!probe) {
      out.push(
        warn(
          name,
          'not checked: this build has no scanner drivers',
          'this build has no drivers for it: reinstall edge-agent from its release',
        ),
      );
      continue;
    }
    try {
      const info = await probe(s);
      out.push(
        pass(
          name,
          `answers: ${info.model}${info.firmware ? ` firmware ${info.firmware}` : ''}${info.serial ? ` serial ${info.serial}` : ''}`,
        ),
      );
    } catch (err) {
      const r = fromError(name, err, `check the cable and that ${s.path} is the scanner (ls -l /dev/fingerprint* /dev/iris* /dev/ttyUSB*)`);
      r.hint = scannerHint(s, r.detail) ?? r.hint;
      out.push(r);
    }
  }
  return out;
}

/**
 * What a failed probe most likely means, where the driver's own hint would mislead: a port held by
 * another process (the running agent of another data folder, a second command) is not a baud rate
 * problem; a module that stays silent is most often at another baud rate or of another family.
 */
export function scannerHint(s: ScannerConfig, detail: string): string | null {
  if (/TRANSPORT_BUSY|cannot lock port|resource temporarily unavailable|EAGAIN|EBUSY|in use by another/i.test(detail)) {
    // The driver names the holder where /proc shows it (TRANSPORT_BUSY ... pid N (command)).
    const named = /\bpid \d+/.test(detail);
    return `another process holds ${s.path}${named ? ' (named above)' : ''}: the running agent (systemctl status edge-agent; stop it to test the scanner here, or enrol through it) or another edge-agent command${named ? '' : `; "fuser -v ${s.path}" names it`}`;
  }
  if (/TIMEOUT|no answer|no reply/i.test(detail) && s.family !== 'iris-hid') {
    return `nothing answered ${s.family} at ${s.baud ?? 'its default'} baud: a module at another baud rate or of another family stays silent; "edge-agent devices --port ${s.path}" tries every family and baud rate and says which answers (then provision --scanner family:${s.path}:baud)`;
  }
  return null;
}
