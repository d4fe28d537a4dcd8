import { describe, expect, it } from 'vitest';

describe('openScanner for iris-hid', () => {
  it('builds an IrisHidScanner on a HID transport, and a missing camera fails with TRANSPORT_NOT_FOUND', async () => {
    const { createScanner } = await import('../../../drivers/open-scanner.js');
    const scanner = await createScanner({ family: 'iris-hid', path: '/dev/hidraw-does-not-exist' });
    expect(scanner.family).toBe('iris-hid');
    await expect(scanner.open()).rejects.toMatchObject({ code: 'TRANSPORT_NOT_FOUND' });
  });
});
