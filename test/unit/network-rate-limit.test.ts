import { expandIPv6, NetworkRateLimiter, networkOf } from '../../local/network-rate-limit';

describe('grouping client addresses into networks', () => {
  it('keeps IPv4 per address, unwrapping IPv4-mapped IPv6', () => {
    expect(networkOf('203.0.113.7')).toBe('203.0.113.7');
    expect(networkOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('groups IPv6 per /64 whatever the notation', () => {
    expect(networkOf('2001:db8:1:2:aaaa::1')).toBe('2001:0db8:0001:0002::/64');
    expect(networkOf('2001:DB8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:0db8:0001:0002::/64');
    expect(networkOf('2001:db8:1:3::1')).not.toBe(networkOf('2001:db8:1:2::1'));
    expect(networkOf('::1')).toBe('0000:0000:0000:0000::/64');
  });

  it('counts a dotted IPv4 tail as the last two hextets, so the /64 is the one the address is in', () => {
    // 1:0:2:3:4:5:0607:0809: with the tail taken as one group, :: would stand for one zero too many
    expect(networkOf('1::2:3:4:5:6.7.8.9')).toBe('0001:0000:0002:0003::/64');
    expect(networkOf('1::2:3:4:5:6.7.8.9')).toBe(networkOf('1:0:2:3:4:5:607:809'));
    expect(networkOf('64:ff9b::192.0.2.1')).toBe('0064:ff9b:0000:0000::/64');
    expect(expandIPv6('2001:db8:1:2:3:4:192.0.2.1')).toEqual([
      '2001',
      '0db8',
      '0001',
      '0002',
      '0003',
      '0004',
      'c000',
      '0201',
    ]);
  });

  it('treats IPv4-mapped IPv6 in any notation as the IPv4 address', () => {
    expect(networkOf('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(networkOf('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(networkOf('::ffff:cb00:7107')).toBe('203.0.113.7');
  });

  it('expands :: in the middle, at the start and at the end', () => {
    expect(expandIPv6('fe80::1%eth0')).toEqual(['fe80', '0000', '0000', '0000', '0000', '0000', '0000', '0001']);
    expect(expandIPv6('2001:db8::')).toEqual(['2001', '0db8', '0000', '0000', '0000', '0000', '0000', '0000']);
  });
});

describe('the per-network limiter', () => {
  it('allows exactly the limit per network and window, sharing one budget across a /64', () => {
    let now = Date.parse('2026-11-21T10:00:05.000Z');
    const limiter = new NetworkRateLimiter(600, () => now);

    const results = Array.from({ length: 601 }, (_, i) => limiter.consume(`2001:db8:1:2::${(i % 50).toString(16)}`));
    const otherNetwork = limiter.consume('2001:db8:1:3::1');
    now += 55_000;
    const nextWindow = limiter.consume('2001:db8:1:2::1');

    expect(results.filter((r) => r.allowed)).toHaveLength(600);
    expect(results[600]).toEqual({ allowed: false, limit: 600, remaining: 0, resetSeconds: 55 });
    expect(otherNetwork.allowed).toBe(true);
    expect(nextWindow).toMatchObject({ allowed: true, remaining: 599 });
  });

  it('is off with a limit of 0', () => {
    const limiter = new NetworkRateLimiter(0);

    expect(Array.from({ length: 1000 }, () => limiter.consume('198.51.100.1').allowed).every(Boolean)).toBe(true);
  });
});
