/**
 * Retry timing (spec section 6 rule 3): 8 attempts; after failed attempt n the wait is
 * base x 2^(n-1), capped at 60 x base. With the default base of one minute: 1, 2, 4, 8, 16, 32
 * and 60 minutes, 123 minutes in all. The local runtime shrinks the base (`--webhook-backoff-ms`)
 * and everything, the cap included, scales with it.
 */
export const MAX_ATTEMPTS = 8;
export const DEFAULT_BACKOFF_BASE_MS = 60_000;
export const BACKOFF_CAP_FACTOR = 60;

/** SQS refuses a DelaySeconds above 900; a longer wait travels in hops with a not-before time. */
export const MAX_QUEUE_DELAY_MS = 900_000;

/** The wait after failed attempt `attempt` (1-based), or undefined after the last one. */
export function retryDelayMs(attempt: number, baseMs = DEFAULT_BACKOFF_BASE_MS): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('retryDelayMs: attempt must be a positive integer');
  if (attempt >= MAX_ATTEMPTS) return undefined;
  return Math.min(baseMs * 2 ** (attempt - 1), baseMs * BACKOFF_CAP_FACTOR);
}

/** Every wait of a delivery that never succeeds, in order (7 waits between 8 attempts). */
export const retrySchedule = (baseMs = DEFAULT_BACKOFF_BASE_MS): number[] =>
  Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => retryDelayMs(i + 1, baseMs)!);

/**
 * The next hop towards `dueAtMs`: at most the queue's maximum delay now, and when the wait is
 * longer, a not-before time the receiver checks and answers with another hop.
 */
export function nextHop(dueAtMs: number, nowMs: number): { delayMs: number; notBefore?: number } {
  const wait = Math.max(0, dueAtMs - nowMs);
  return wait > MAX_QUEUE_DELAY_MS ? { delayMs: MAX_QUEUE_DELAY_MS, notBefore: dueAtMs } : { delayMs: wait };
}
