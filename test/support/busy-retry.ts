import { isContention } from '../../lambdas/shared/table/contention';

/**
 * What a client does with the service's 503 `temporarily_unavailable` (and Twilio with a callback
 * answered 503): the same request again after `Retry-After`. Contention that outlasted the
 * service's own retries wrote nothing, so the request is safe to send again as it was. On the
 * limits-faithful engine, tests that run many writes on one item at once go through this, as their
 * callers would.
 */

export async function retryWhileBusy<T>(request: () => Promise<T>, attempts = 20, pauseMs = 100): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await request();
    } catch (err) {
      if (!isContention(err) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs * (0.5 + Math.random())));
    }
  }
}
