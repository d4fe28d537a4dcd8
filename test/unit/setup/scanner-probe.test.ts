// Doctor's and provisioning's "does the scanner answer?": a badge reader answers nothing, so the
// check says plainly that only its port was opened, and with which line format.
import { describe, expect, it } from 'vitest';
import { scannerProbe } from '../../../src/setup/scanner-probe.js';

describe('scannerProbe', () => {
  it('says a badge reader was only opened, not heard, and keeps its format', async () => {
    const r = await scannerProbe({ family: 'badge-serial', path: 'sim', format: 'wiegand26' });
    expect(r.model).toBe('wiegand26 reader (port opens; a reader says nothing until a card is read: hold one to it to check) (simulated)');
    await expect(scannerProbe({ family: 'badge-serial', path: '/dev/ttyUSB-not-here' })).rejects.toMatchObject({
      code: 'TRANSPORT_NOT_FOUND',
    });
  });

  it('names a fingerprint module by its model', async () => {
    expect((await scannerProbe({ family: 'r30x', path: 'sim' })).model).toBe('R503 (simulated)');
  });
});
