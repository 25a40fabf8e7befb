/**
 * How Twilio retries a callback, from its "Webhook connection overrides" documentation, for the
 * fakes that play Twilio in tests: the overrides ride in the URL's fragment (`#rc=5&rp=all...`),
 * which Twilio neither sends nor signs. Without them Twilio tries once more, and only when it could
 * not connect. Written from the documentation, not from the service's code, so the tests prove the
 * URLs the service hands out make Twilio retry.
 */
export type RetryPolicy = {
  /** Retries after the first attempt (`rc`, 0 to 5; default 1). */
  retries: number;
  /** Failures that are retried (`rp`: `ct`, `rt`, `4xx`, `5xx` or `all`; default `ct`). */
  on: ReadonlySet<string>;
  /** All attempts together (`tt`, at most 15 s). */
  totalMs: number;
};

const MAX_TOTAL_MS = 15_000;

export function retryPolicyOf(url: string): RetryPolicy {
  const hash = url.indexOf('#');
  const overrides = new URLSearchParams(hash === -1 ? '' : url.slice(hash + 1));
  const rc = Number(overrides.get('rc') ?? 1);
  const tt = Number(overrides.get('tt') ?? MAX_TOTAL_MS);
  return {
    retries: Math.min(Math.max(Number.isInteger(rc) ? rc : 1, 0), 5),
    on: new Set((overrides.get('rp') ?? 'ct').split(',')),
    totalMs: Math.min(Number.isFinite(tt) ? tt : MAX_TOTAL_MS, MAX_TOTAL_MS),
  };
}

/** An attempt's failure as Twilio classifies it: no connection, no answer in time, or an HTTP status. */
export type AttemptFailure = { kind: 'connect' } | { kind: 'read' } | { kind: 'status'; status: number };

export function isRetried(policy: RetryPolicy, failure: AttemptFailure): boolean {
  if (policy.on.has('all')) return true;
  if (failure.kind === 'connect') return policy.on.has('ct');
  if (failure.kind === 'read') return policy.on.has('rt');
  return policy.on.has(`${Math.floor(failure.status / 100)}xx`);
}

/** The URL Twilio requests (and signs): the fragment is Twilio's own. */
export const requestedUrlOf = (url: string): string => url.split('#')[0];
