import { describe, expect, it } from 'vitest';
import { clientBucketOf } from '../../../src/core/client-address.js';

describe('the address a client is counted under', () => {
  it('counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientBucketOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientBucketOf('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientBucketOf('2001:db8::9')).toBe('2001:db8:0:0::/64');
    expect(clientBucketOf('2001:DB8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientBucketOf('::ffff:10.0.0.7')).toBe('10.0.0.7');
    expect(clientBucketOf('10.0.0.7')).toBe('10.0.0.7');
    expect(clientBucketOf(undefined)).toBe('unknown');
  });
});
