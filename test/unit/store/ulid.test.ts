import { describe, expect, it } from 'vitest';
import { derivedUlid, ulid, ULID_RE, ulidTime } from '../../../src/store/ulid.js';

describe('ulid', () => {
  it('sorts by time and stays monotonic inside one millisecond', () => {
    const ids = Array.from({ length: 500 }, () => ulid(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(500);
    expect(ulidTime(ids[0]!)).toBe(1_700_000_000_000);
    expect(ulid(1_700_000_000_001) > ids[499]!).toBe(true);
  });

  it('derives the same id from the same time and key, another from another key', () => {
    const a = derivedUlid(1_772_348_400_000, 'sha256:ab:1');
    expect(a).toMatch(ULID_RE);
    expect(derivedUlid(1_772_348_400_000, 'sha256:ab:1')).toBe(a);
    expect(derivedUlid(1_772_348_400_000, 'sha256:ab:2')).not.toBe(a);
    expect(ulidTime(a)).toBe(1_772_348_400_000);
    expect(derivedUlid(-5, 'k').slice(0, 10)).toBe('0000000000');
  });
});
