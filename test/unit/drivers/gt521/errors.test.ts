import { describe, expect, it } from 'vitest';
import { Gt521Command } from '../../../../drivers/gt521/protocol.js';

describe('GT-521 NACK errors', () => {
  it('gives every NACK code its own named error with the device number, name and a hint', async () => {
    const { Gt521NackError } = await import('../../../../drivers/gt521/errors.js');
    const { NACK_CODES } = await import('../../../../drivers/gt521/protocol.js');
    const codes = new Set<string>();
    for (const [num, info] of Object.entries(NACK_CODES)) {
      const err = new Gt521NackError(Number(num), Gt521Command.Verify);
      expect(err.code).toBe(`DRIVER_GT521_${info.name.replace(/^NACK_/, '')}`);
      expect(err.context).toMatchObject({ family: 'gt521', command: 'Verify', deviceCode: Number(num), deviceName: info.name });
      expect(err.hint).toBeTruthy();
      codes.add(err.code);
    }
    expect(codes.size).toBe(18);
    const dup = new Gt521NackError(42, Gt521Command.Enroll3);
    expect(dup).toMatchObject({ code: 'DRIVER_GT521_DUPLICATE', context: { duplicateOf: 42, command: 'Enroll3' } });
    expect(new Gt521NackError(0x2000, Gt521Command.Open).code).toBe('DRIVER_GT521_UNKNOWN_NACK');
  });
});
