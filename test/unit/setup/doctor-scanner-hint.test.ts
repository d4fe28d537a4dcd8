// Doctor's hint for a scanner check that failed: a port held by another process is not a baud
// problem, and where the driver named the holder the hint points at it instead of at fuser.
import { describe, expect, it } from 'vitest';
import { scannerHint } from '../../../src/setup/doctor.js';

const S = { family: 'r30x' as const, path: '/dev/fingerprint0', baud: 57600 };

describe('scannerHint', () => {
  it('a held port: the holder named above, or fuser when the driver could not see it', () => {
    const named = scannerHint(S, 'TRANSPORT_BUSY: /dev/fingerprint0 is in use by another program: pid 812 (edge-agent run) holds it');
    expect(named).toBe(
      'another process holds /dev/fingerprint0 (named above): the running agent (systemctl status edge-agent; stop it to test the scanner here, or enrol through it) or another edge-agent command',
    );
    const unnamed = scannerHint(S, 'TRANSPORT_BUSY: /dev/fingerprint0 is in use by another program: another program holds it');
    expect(unnamed).toMatch(/^another process holds \/dev\/fingerprint0: .*; "fuser -v \/dev\/fingerprint0" names it$/);
  });

  it('a silent module: another baud rate or family, not a held port', () => {
    expect(scannerHint(S, 'DRIVER_TIMEOUT: no answer from the module')).toMatch(/^nothing answered r30x at 57600 baud/);
    expect(scannerHint(S, 'DRIVER_R30X_WRONG_PASSWORD: refused')).toBeNull();
  });
});
