/**
 * How long one authorizer decision can be in flight: from its read of the key and organization
 * rows to API Gateway caching its answer. A decision that read a row just before `key revoke`
 * (or `key rotate`, or `tenant update --plan`) wrote it, and is answered just after the command
 * flushed the cache, would be cached as the old answer for the whole TTL; so the operator CLI
 * flushes, waits this long, and flushes again (local/admin/authorizer-cache.ts). The function's
 * timeout bounds it in AWS, where nothing else can tell when the invocations under way end; the
 * local runtime ends its authorizer invocations at the same timeout (local/authorizer.ts).
 * No imports: the CDK app, the local runtime and the operator CLI read it.
 */

/**
 * The authorizer function's timeout. It makes two strongly consistent GetItems (tens of
 * milliseconds, a few retries of a throttle included); short, because the CLI waits it out after
 * every change that takes access away, and an invocation that overruns it is answered 500
 * (AUTHORIZER_FAILURE, safe to retry) and never cached.
 */
export const AUTHORIZER_TIMEOUT_SECONDS = 3;

/**
 * API Gateway's part after the function answers (caching the answer), and Lambda's lateness in
 * ending a function at its timeout: milliseconds, rounded up to a second.
 */
const GATEWAY_MARGIN_MS = 1_000;

/** The longest a decision can be in flight: what the CLI waits between its two flushes of a stage. */
export const IN_FLIGHT_DECISION_BOUND_MS = AUTHORIZER_TIMEOUT_SECONDS * 1_000 + GATEWAY_MARGIN_MS;
