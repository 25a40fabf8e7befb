/**
 * Throughput budgets, one token bucket per key (a partition-key value, an item, an index
 * partition-key value): `ratePerSecond` units flow in continuously, up to one second's worth
 * (DynamoDB's partition limits are per second; the burst of one second is this engine's
 * choice, docs/local-engine.md). A rate of 0 turns the budget off.
 *
 * A request is admitted when the bucket holds what it is expected to cost (capped at the bucket's
 * size, so an item larger than a second's budget is not refused forever); what it really cost is
 * taken afterwards, and may leave the bucket in debt, which later requests wait out.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly ratePerSecond: number,
    private readonly now: () => number = () => performance.now(),
    /** Above this many keys, full buckets (which are the same as no bucket) are forgotten. */
    private readonly sweepAbove = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ratePerSecond > 0;
  }

  private refilled(key: string): { tokens: number; at: number } {
    const now = this.now();
    const bucket = this.buckets.get(key);
    if (!bucket) return { tokens: this.ratePerSecond, at: now };
    const tokens = Math.min(this.ratePerSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    return { tokens, at: now };
  }

  /** Whether a request expected to cost `units` may go now. */
  admits(key: string, units: number): boolean {
    if (!this.enabled) return true;
    return this.refilled(key).tokens >= Math.min(units, this.ratePerSecond);
  }

  /** Takes what a request cost (negative `units` give back an over-estimate). */
  take(key: string, units: number): void {
    if (!this.enabled || units === 0) return;
    const bucket = this.refilled(key);
    bucket.tokens -= units;
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.sweepAbove) this.sweep();
  }

  private sweep(): void {
    for (const key of [...this.buckets.keys()]) {
      if (this.refilled(key).tokens >= this.ratePerSecond) this.buckets.delete(key);
    }
  }

  clear(): void {
    this.buckets.clear();
  }
}
