import { msLeft } from '../deadline';

/**
 * DynamoDB's contention answers, and the one retry policy for them. One import (the request's
 * deadline, which no retry outlasts): the SDK client (shared/aws.ts), the error mapper and the
 * tests read it alike.
 *
 * DynamoDB refuses work it cannot do right now in four ways, none of which changed anything:
 * - a throttle (`ThrottlingException`, `ProvisionedThroughputExceededException`,
 *   `RequestLimitExceeded`): a partition key, an item or the account is over its budget;
 * - `TransactionConflictException`: a plain write to an item an ongoing transaction holds;
 * - `TransactionCanceledException` whose reasons are only `TransactionConflict` (another ongoing
 *   transaction holds one of its items) or `ThrottlingError` / `ProvisionedThroughputExceeded`
 *   (one of its items is over its budget), `None` for the rest. A cancellation that names a
 *   `ConditionalCheckFailed` is an answer, not contention: it is never retried.
 * The SDK retries throttles by itself, but not the two transaction answers, and its throttle
 * backoff (a 500 ms base, three attempts) outlasts a request's budget. So every DynamoDB client
 * of the service uses `ContentionRetryStrategy`: the same few quick, jittered attempts for all
 * of them, and what is still refused after that surfaces as contention (the API answers 503 with
 * Retry-After: nothing was written, so the same request again is safe).
 */

const THROTTLE_NAMES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
]);
const CONTENTION_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

type AwsErrorLike = { name?: string; CancellationReasons?: { Code?: string }[] };

/** True for a refusal that wrote nothing and may succeed when asked again in a moment. */
export function isContention(err: unknown): boolean {
  const { name, CancellationReasons } = (err ?? {}) as AwsErrorLike;
  if (!name) return false;
  if (THROTTLE_NAMES.has(name) || name === 'TransactionConflictException') return true;
  if (name !== 'TransactionCanceledException' || !CancellationReasons) return false;
  const codes = CancellationReasons.map((reason) => reason.Code ?? 'None').filter((code) => code !== 'None');
  return codes.length > 0 && codes.every((code) => CONTENTION_REASONS.has(code));
}

/** Attempts per call, the first included. */
export const CONTENTION_MAX_ATTEMPTS = 8;

/**
 * The pause before retry `n` (1-based): 25, 50, 100... ms, capped at 500 ms, with equal jitter (half
 * fixed, half random) so writers that collided spread out. Seven retries wait at most ~1.7 s in
 * all, a sixth of an API function's 10 s, leaving the rest for the carrier and the other calls.
 */
export function contentionBackoffMs(retry: number, random: () => number = Math.random): number {
  const base = Math.min(500, 25 * 2 ** (retry - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}

/** What the SDK's retry middleware tells the strategy about a failed attempt. */
type RetryErrorInfo = { error?: unknown; errorType: 'THROTTLING' | 'TRANSIENT' | 'SERVER_ERROR' | 'CLIENT_ERROR' };

class RetryToken {
  constructor(
    private readonly retries: number,
    private readonly delayMs: number,
    private readonly cost: number | undefined,
  ) {}
  getRetryCount = () => this.retries;
  getRetryDelay = () => this.delayMs;
  getRetryCost = () => this.cost;
}

/** The retry quota of the SDK's standard mode: a retry costs tokens, a success returns them. */
const QUOTA = { initial: 500, retryCost: 5, timeoutCost: 10 };

/**
 * The SDK's retry strategy (its `RetryStrategyV2` contract) for DynamoDB: what the standard mode
 * retries (throttles, timeouts, 5xx) plus the two transaction answers above, `maxAttempts` in
 * all, paced by `contentionBackoffMs`, and bounded by the standard mode's retry quota so an outage
 * does not turn every call into seven.
 */
export class ContentionRetryStrategy {
  readonly mode = 'standard';
  private capacity = QUOTA.initial;

  constructor(
    private readonly maxAttempts = CONTENTION_MAX_ATTEMPTS,
    private readonly backoff: (retry: number) => number = contentionBackoffMs,
  ) {}

  async acquireInitialRetryToken(): Promise<RetryToken> {
    return new RetryToken(0, 0, undefined);
  }

  async refreshRetryTokenForRetry(token: RetryToken, info: RetryErrorInfo): Promise<RetryToken> {
    const retryable = info.errorType === 'THROTTLING' || info.errorType === 'TRANSIENT' || isContention(info.error);
    const cost =
      (info.error as { name?: string } | undefined)?.name === 'TimeoutError' ? QUOTA.timeoutCost : QUOTA.retryCost;
    const retries = token.getRetryCount() + 1;
    const delay = this.backoff(retries);
    // A retry that would start past the request's deadline (../deadline.ts) is not made: the caller answers in time.
    const late = msLeft() <= delay;
    if (!retryable || late || retries >= this.maxAttempts || this.capacity < cost)
      throw new Error('No retry token available');
    this.capacity -= cost;
    return new RetryToken(retries, delay, cost);
  }

  recordSuccess(token: RetryToken): void {
    this.capacity = Math.min(QUOTA.initial, this.capacity + (token.getRetryCost() ?? 1));
  }
}
