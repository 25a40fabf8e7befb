import { isIPv4, isIPv6 } from 'node:net';
import { windowOf, type RateLimitState } from '../lambdas/contexts/tenants/rate-limit-window';

/**
 * The per-network limit before authentication (spec section 8: 600 per minute, IPv6 grouped per
 * /64), exact and in memory for the local runtime. In AWS the WAF rate-based rule plays this part
 * (it aggregates per address, not per /64: see the README).
 */
export function networkOf(address: string): string {
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const hextets = expandIPv6(address);
  // IPv4-mapped (::ffff:a.b.c.d, in any notation) is an IPv4 client: counted per address like one.
  if (hextets.slice(0, 6).join(':') === '0000:0000:0000:0000:0000:ffff') return ipv4OfHextets(hextets[6], hextets[7]);
  return `${hextets.slice(0, 4).join(':')}::/64`;
}

const ipv4OfHextets = (high: string, low: string): string =>
  [parseInt(high, 16) >> 8, parseInt(high, 16) & 0xff, parseInt(low, 16) >> 8, parseInt(low, 16) & 0xff].join('.');

/** A dotted IPv4 tail (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.1`) is the last two hextets. */
function dottedTailAsHextets(group: string): string[] {
  if (!group.includes('.')) return [group];
  const [a, b, c, d] = group.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

/** The eight hextets of an IPv6 address, zero-padded, lower case (zone id dropped, a dotted IPv4 tail converted). */
export function expandIPv6(address: string): string[] {
  const [head, tail] = address.split('%')[0].toLowerCase().split('::');
  const groups = (text: string | undefined) => (text ? text.split(':').flatMap(dottedTailAsHextets) : []);
  const left = groups(head);
  const right = groups(tail);
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array(missing).fill('0'), ...right].map((h) => h.padStart(4, '0'));
}

export class NetworkRateLimiter {
  private windowStart = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Counts one request from `address`; a limit of 0 turns the limiter off. */
  consume(address: string): RateLimitState {
    const { start, resetSeconds } = windowOf(this.clock());
    if (this.limit <= 0) return { allowed: true, limit: this.limit, remaining: this.limit, resetSeconds };
    // Only the current window matters, so a new window simply starts from an empty map.
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts = new Map();
    }
    const network = networkOf(address);
    const used = this.counts.get(network) ?? 0;
    if (used >= this.limit) return { allowed: false, limit: this.limit, remaining: 0, resetSeconds };
    this.counts.set(network, used + 1);
    return { allowed: true, limit: this.limit, remaining: this.limit - used - 1, resetSeconds };
  }
}
