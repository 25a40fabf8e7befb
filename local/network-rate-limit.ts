import { isIPv4, isIPv6 } from 'node:net';
import { windowOf, type RateLimitState } from '../lambdas/contexts/tenants/rate-limit-window';

/**
 * The per-network limit before authentication (spec section 8: 600 per minute, IPv6 grouped per
 * /64), exact and in memory for the local runtime. In AWS the WAF rate-based rule plays this part
 * (it aggregates per address, not per /64: see the README).
 */
export function networkOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address, zero-padded, lower case (zone id dropped). */
export function expandIPv6(address: string): string[] {
  const [head, tail] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
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
