import type { AttemptOutcome } from './http-post';
import { disableUnhealthyEndpoint, recordEndpointStreak, type WebhookEndpoint } from './endpoints';

/**
 * Endpoint health, after every attempt (deliver.ts), as Svix and Stripe do it:
 * - an endpoint that answers 410 Gone says it no longer exists: disabled at once;
 * - an endpoint whose every attempt has failed for ENDPOINT_FAILING_LIMIT_MS (5 days; its row keeps
 *   `failingSince`, the first failure after its last success) is disabled at its next failure.
 * Disabling is logged and counted (endpoints.ts); `webhook enable` undoes it, and
 * `webhook recover` sends what failed meanwhile.
 */
export const ENDPOINT_FAILING_LIMIT_MS = 5 * 24 * 3600 * 1000;

export const GONE_STATUS = 410;

export type HealthVerdict = { disabled: false } | { disabled: true; reason: 'gone' | 'failing'; detail: string };

/** Pure: what this attempt's outcome says about the endpoint, given what its row said before the attempt. */
export function judgeAttempt(
  endpoint: Pick<WebhookEndpoint, 'failingSince'>,
  outcome: AttemptOutcome,
  nowMs: number,
  failingLimitMs = ENDPOINT_FAILING_LIMIT_MS,
): HealthVerdict {
  if (outcome.ok) return { disabled: false };
  if (outcome.status === GONE_STATUS)
    return { disabled: true, reason: 'gone', detail: 'the endpoint answered 410 Gone' };
  const since = endpoint.failingSince === null ? Number.NaN : Date.parse(endpoint.failingSince);
  if (!Number.isNaN(since) && nowMs - since >= failingLimitMs) {
    return { disabled: true, reason: 'failing', detail: `every attempt has failed since ${endpoint.failingSince}` };
  }
  return { disabled: false };
}

/**
 * Applies the verdict: disables the endpoint, or notes the start or end of its failing streak
 * (a write only when that changes). Returns the verdict.
 */
export async function applyAttemptHealth(
  endpoint: WebhookEndpoint,
  outcome: AttemptOutcome,
  now: Date,
  failingLimitMs = ENDPOINT_FAILING_LIMIT_MS,
): Promise<HealthVerdict> {
  const verdict = judgeAttempt(endpoint, outcome, now.getTime(), failingLimitMs);
  if (verdict.disabled) {
    await disableUnhealthyEndpoint(endpoint, verdict.reason, verdict.detail, now);
  } else if (outcome.ok === (endpoint.failingSince !== null)) {
    // A success ends a streak; a failure starts one.
    await recordEndpointStreak(endpoint, !outcome.ok, now);
  }
  return verdict;
}
