import { describe, expect, it } from 'vitest';
import { listSerialPorts, probeSerialPort } from '../../../drivers/discovery.js';
import { AgentError } from '../../../src/core/errors.js';

type Run = (
  path: string,
  baud: number,
) => Promise<{ model: string; firmware: string | null; capacity: number | null; templates: number | null } | null>;
const probe = (family: 'r30x' | 'gt521', bauds: number[], run: Run) => ({ family, bauds, run });

describe('discovery', () => {
  it('tries each family at its likely baud first, interleaved, and stops at the first answer', async () => {
    const calls: string[] = [];
    const r30x = probe('r30x', [57600, 9600, 115200], async (_p, b) => {
      calls.push(`r30x@${b}`);
      return null;
    });
    const gt = probe('gt521', [9600, 19200, 115200], async (_p, b) => {
      calls.push(`gt521@${b}`);
      return b === 19200 ? { model: 'GT-521F32', firmware: '1', capacity: 200, templates: 3 } : null;
    });
    const r = await probeSerialPort('/dev/ttyX', { probes: [r30x, gt] });
    expect(calls).toEqual(['r30x@57600', 'gt521@9600', 'r30x@9600', 'gt521@19200']);
    expect(r.device).toEqual({
      path: '/dev/ttyX',
      transport: 'serial',
      family: 'gt521',
      baud: 19200,
      model: 'GT-521F32',
      firmware: '1',
      capacity: 200,
      templates: 3,
    });
  });

  it('probes only the given baud rate, and reports nothing when nothing answers', async () => {
    const calls: string[] = [];
    const r = await probeSerialPort('/dev/ttyX', {
      baud: 38400,
      probes: [
        probe('r30x', [57600], async (_p, b) => {
          calls.push(`r30x@${b}`);
          return null;
        }),
        probe('gt521', [9600], async (_p, b) => {
          calls.push(`gt521@${b}`);
          return null;
        }),
      ],
    });
    expect(calls).toEqual(['r30x@38400', 'gt521@38400']);
    expect(r.device).toBeNull();
    expect(r.error).toBeNull();
    expect(r.tried).toEqual(calls);
  });

  it('stops at a transport error (no such port, no permission) and says it', async () => {
    const denied = new AgentError('TRANSPORT_PERMISSION', 'not allowed', {}, { hint: 'dialout' });
    let calls = 0;
    const r = await probeSerialPort('/dev/ttyX', {
      probes: [
        probe('r30x', [57600, 9600], async () => {
          calls++;
          throw denied;
        }),
      ],
    });
    expect(calls).toBe(1);
    expect(r.error).toBe(denied);
  });

  it('lists serial ports even where udevadm is missing (a /dev scan), only paths that exist', async () => {
    const ports = await listSerialPorts();
    expect(Array.isArray(ports)).toBe(true);
    for (const p of ports) expect(p).toMatch(/^\/dev\//);
  });
});
