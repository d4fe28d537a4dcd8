// Doctor's scanner checks. The hint for one that failed: a port held by another process is not a
// baud problem, and where the driver named the holder the hint points at it instead of at fuser.
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../../src/core/errors.js';
import { checkScanners, heldScannerKey, scannerHint } from '../../../../src/setup/doctor/scanners.js';

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

describe('checkScanners', () => {
  it('keys a scanner as the running agent reports it', () => {
    expect(heldScannerKey({ family: 'r30x', path: '/dev/ttyUSB0' })).toBe('r30x:/dev/ttyUSB0');
    expect(heldScannerKey({ family: 'iris-hid', path: 'sim' })).toBe('sim:iris-hid');
  });

  it('none configured says whether the agent simulates them', async () => {
    expect((await checkScanners([], null, { simulate: true }))[0]).toMatchObject({
      name: 'scanners',
      status: 'warn',
      detail: 'no scanners configured; the agent runs simulated scanners (simulate: true)',
    });
  });

  it('one check a scanner, named by family and path; without drivers a warning', async () => {
    const r = await checkScanners([S, { family: 'gt521', path: '/dev/ttyUSB1' }], null);
    expect(r.map((c) => [c.name, c.status])).toEqual([
      ['scanner r30x:/dev/fingerprint0', 'warn'],
      ['scanner gt521:/dev/ttyUSB1', 'warn'],
    ]);
    expect(r[0]!.detail).toBe('not checked: this build has no scanner drivers');
  });

  it('a probe that answers passes with what the module says; one that fails gets the hint that fits', async () => {
    const ok = await checkScanners([S], async () => ({ model: 'R503', firmware: '1.2', serial: 'A7' }));
    expect(ok[0]!.detail).toBe('answers: R503 firmware 1.2 serial A7');
    const busy = await checkScanners([S], async () => {
      throw new AgentError('TRANSPORT_BUSY', '/dev/fingerprint0 is in use by another program', {}, { hint: 'the driver hint' });
    });
    expect(busy[0]).toMatchObject({ status: 'fail', hint: expect.stringMatching(/^another process holds \/dev\/fingerprint0/) });
  });
});
