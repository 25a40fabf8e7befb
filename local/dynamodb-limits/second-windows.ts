/**
 * Throughput budgets as one-second sliding windows, one per key (a partition-key value, an item,
 * an index partition-key value): a key may take at most `capacity` units in any one second.
 * DynamoDB's partition limits are per second and it keeps some unused capacity for bursts; the
 * engine keeps none (the stricter reading, docs/local-engine.md): what a key took in the last
 * second counts in full until it is a second old. A capacity of 0 turns the budget off.
 *
 * A request is admitted when the window has room for what it is expected to cost (capped at the
 * capacity, so a request larger than a second's budget goes once the window is empty); what it
 * really cost replaces the expectation afterwards, in the window at the time it was admitted, so
 * an under-estimate fills the window beyond its capacity and later requests wait it out.
 */
export const WINDOW_MS = 1000;

/**
 * Float sums of fractional costs (a write unit is 3 read units, reads come in halves) must not refuse the last exact
 * unit.
 */
const SLACK = 1e-9;

/** One admitted request's units in a key's window; `live` until it is a second old. */
export type WindowTake = { at: number; units: number; live: boolean };

type Window = { takes: WindowTake[]; first: number; used: number };

export class SecondWindows {
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly capacity: number,
    private readonly now: () => number = () => performance.now(),
    /** Above this many keys, empty windows (which are the same as no window) are forgotten. */
    private readonly sweepAbove = 10_000,
  ) {}

  get enabled(): boolean {
    return this.capacity > 0;
  }

  /** Drops the takes a second old or older. */
  private current(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (!window) return undefined;
    const oldest = this.now() - WINDOW_MS;
    while (window.first < window.takes.length && window.takes[window.first].at <= oldest) {
      const take = window.takes[window.first];
      take.live = false;
      window.used -= take.units;
      window.first += 1;
    }
    if (window.first === window.takes.length) {
      window.takes = [];
      window.first = 0;
      window.used = 0; // no float drift carried past an empty window
    } else if (window.first > 1024 && window.first * 2 > window.takes.length) {
      window.takes = window.takes.slice(window.first);
      window.first = 0;
    }
    return window;
  }

  /** Units the key took in the last second. */
  used(key: string): number {
    return this.current(key)?.used ?? 0;
  }

  /** Whether a request expected to cost `units` may go now. */
  admits(key: string, units: number): boolean {
    if (!this.enabled) return true;
    return this.used(key) + Math.min(units, this.capacity) <= this.capacity + SLACK;
  }

  /** Counts `units` in the key's window from now; the handle lets `settle` replace them. */
  take(key: string, units: number): WindowTake | undefined {
    if (!this.enabled || units <= 0) return undefined;
    let window = this.current(key);
    if (!window) {
      if (this.windows.size >= this.sweepAbove) this.sweep();
      window = { takes: [], first: 0, used: 0 };
      this.windows.set(key, window);
    }
    const take: WindowTake = { at: this.now(), units, live: true };
    window.takes.push(take);
    window.used += units;
    return take;
  }

  /**
   * Replaces what an earlier `take` counted by what the request really cost. A take already a
   * second old is gone from the window: only a cost beyond it is counted, from now.
   */
  settle(key: string, taken: WindowTake | undefined, units: number): void {
    if (!this.enabled) return;
    if (taken?.live) {
      const window = this.current(key);
      if (window && taken.live) {
        window.used += units - taken.units;
        taken.units = units;
        return;
      }
    }
    this.take(key, units - (taken?.units ?? 0));
  }

  private sweep(): void {
    for (const key of [...this.windows.keys()]) if (this.used(key) <= SLACK) this.windows.delete(key);
  }

  clear(): void {
    this.windows.clear();
  }
}
