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
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError('retryDelayMs: attempt must be a positive integer');
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

/**
 * A receiver's `Retry-After` (on 429 and 503) as milliseconds from `nowMs`: delta-seconds or an
 * HTTP date (RFC 9110 section 10.2.3); undefined when it is neither.
 */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The wait after failed attempt `attempt`: the backoff, or longer when the receiver asked for more
 * time, but never past the cap (60 x base: the spec's 60 minutes), so the 8 attempts still end.
 */
export function waitAfterFailure(
  attempt: number,
  askedMs: number | undefined,
  baseMs = DEFAULT_BACKOFF_BASE_MS,
): number | undefined {
  const backoff = retryDelayMs(attempt, baseMs);
  if (backoff === undefined || askedMs === undefined) return backoff;
  return Math.min(Math.max(backoff, askedMs), baseMs * BACKOFF_CAP_FACTOR);
}
