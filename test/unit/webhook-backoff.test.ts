import {
  MAX_ATTEMPTS,
  MAX_QUEUE_DELAY_MS,
  nextHop,
  retryAfterMs,
  retryDelayMs,
  retrySchedule,
  waitAfterFailure,
} from '../../lambdas/contexts/webhooks/backoff';

const MINUTE = 60_000;

describe('retry backoff', () => {
  it('waits 1, 2, 4, 8, 16, 32 and 60 minutes between 8 attempts, about 2 h 3 min in all', () => {
    // Act
    const waits = retrySchedule();

    // Assess
    expect(waits.map((ms) => ms / MINUTE)).toEqual([1, 2, 4, 8, 16, 32, 60]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect(waits.reduce((a, b) => a + b, 0)).toBe((2 * 60 + 3) * MINUTE);
  });

  it('has no wait after the 8th attempt', () => {
    expect(retryDelayMs(7)).toBe(60 * MINUTE);
    expect(retryDelayMs(8)).toBeUndefined();
    expect(() => retryDelayMs(0)).toThrow(RangeError);
  });

  it('scales every wait and the cap with the base', () => {
    expect(retrySchedule(100)).toEqual([100, 200, 400, 800, 1600, 3200, 6000]);
    expect(retryDelayMs(7, 1000)).toBe(60 * 1000);
  });
});

describe('queue hops', () => {
  const now = 1_700_000_000_000;

  it('sends a wait the queue can hold in one hop, without a not-before time', () => {
    expect(nextHop(now + 8 * MINUTE, now)).toEqual({ delayMs: 8 * MINUTE });
    expect(nextHop(now + 15 * MINUTE, now)).toEqual({ delayMs: MAX_QUEUE_DELAY_MS });
    expect(nextHop(now - 5, now)).toEqual({ delayMs: 0 });
  });

  it('splits a longer wait into 15-minute hops carrying the due time', () => {
    const dueAt = now + 60 * MINUTE;
    const hops: number[] = [];
    let at = now;
    for (;;) {
      const hop = nextHop(dueAt, at);
      hops.push(hop.delayMs);
      if (hop.notBefore === undefined) break;
      expect(hop.notBefore).toBe(dueAt);
      at += hop.delayMs;
    }

    expect(hops).toEqual([MAX_QUEUE_DELAY_MS, MAX_QUEUE_DELAY_MS, MAX_QUEUE_DELAY_MS, MAX_QUEUE_DELAY_MS]);
    expect(nextHop(now + 16 * MINUTE, now)).toEqual({ delayMs: MAX_QUEUE_DELAY_MS, notBefore: now + 16 * MINUTE });
  });
});

describe('Retry-After (429 and 503)', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');

  it('reads delta-seconds and an HTTP date; anything else is no request', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sat, 21 Nov 2026 10:05:00 GMT', now)).toBe(5 * MINUTE);
    expect(retryAfterMs('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-5', now)).toBeUndefined();
  });

  it('waits at least as long as asked, never less than the backoff, and never past the 60-minute cap', () => {
    expect(waitAfterFailure(1, 10 * MINUTE)).toBe(10 * MINUTE);
    expect(waitAfterFailure(3, 30_000)).toBe(4 * MINUTE);
    expect(waitAfterFailure(2, 5 * 60 * MINUTE)).toBe(60 * MINUTE);
    expect(waitAfterFailure(2, undefined)).toBe(2 * MINUTE);
    // The cap scales with a local runtime's shorter base, like the backoff.
    expect(waitAfterFailure(1, 5_000, 20)).toBe(1_200);
  });

  it('adds no attempt: after the eighth there is no wait, asked or not', () => {
    expect(waitAfterFailure(MAX_ATTEMPTS, 10 * MINUTE)).toBeUndefined();
  });
});
