import { IN_FLIGHT_DECISION_BOUND_MS } from '../../lambdas/handlers/authorizer/decision-time';
import { requestAuthorizerCacheFlush, requestAuthorizerDecisionsSettled } from '../runtime-control';
import type { CommandContext } from './registry';
import { appliedTarget } from './target';

/**
 * Revocation and loss of API access that bite at once, with no window. API Gateway caches each
 * key's authorizer decision (`authorizerCacheTtlSeconds`, 300 s by default), and reading the key
 * and organization rows on every request instead would cost two reads per request. So the
 * commands that take access away (`key revoke`, `key rotate`, `tenant update` of a plan, name or
 * slug) change the table, then drop the cached decisions, in three steps:
 * 1. flush: every decision cached before the change is gone;
 * 2. wait out the decisions in flight: one that read the rows just before the change and is
 *    answered after step 1 is cached by then (on a stage, the authorizer's timeout and a margin,
 *    lambdas/handlers/authorizer/decision-time.ts: nothing tells when the invocations under way
 *    end; the local runtime knows its own and answers when they have ended, within the same bound);
 * 3. flush again: that decision is gone too. Every decision made after it reads the changed rows
 *    (strongly consistent reads, tenants/auth.ts), so every request that starts after the command
 *    returns is decided on the change.
 * On a deployed stage the flushes are FlushStageAuthorizersCache, on the local runtime calls to its
 * control listener (local/runtime-control.ts). The next request of every key of the stage is
 * decided afresh from the table (a few authorizer invocations, once: docs/capacity.md).
 */
export type AuthorizerCacheOutcome =
  | { flushed: true; where: string }
  /** A table no stack or running runtime serves: no cache to flush. */
  | { flushed: false; reason: string };

/** The wait on a stage, a timer: replaced in unit tests, which play a decision landing during it. */
export const stageClock = { sleep: (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms)) };

/** An authorizer cache the CLI can reach: where it is, its flush, and the wait for the decisions under way. */
type ReachableCache = {
  where: string;
  flush: () => Promise<unknown>;
  waitOutDecisionsInFlight: () => Promise<unknown>;
};

function cacheOf(context: Pick<CommandContext, 'runtime'>): ReachableCache | { reason: string } {
  const stack = appliedTarget()?.stack;
  if (stack) {
    return {
      where: `stage ${stack.stageName} of API ${stack.restApiId} (stack ${stack.name})`,
      flush: () => stack.aws.flushAuthorizerCache({ restApiId: stack.restApiId, stageName: stack.stageName }),
      waitOutDecisionsInFlight: () => stageClock.sleep(IN_FLIGHT_DECISION_BOUND_MS),
    };
  }
  const control = context.runtime?.control;
  if (control) {
    return {
      where: `the local runtime at ${context.runtime?.apiBaseUrl}`,
      flush: () => requestAuthorizerCacheFlush(control),
      waitOutDecisionsInFlight: () => requestAuthorizerDecisionsSettled(control),
    };
  }
  if (context.runtime) return { reason: 'the running local runtime is older than its control listener: restart it' };
  return { reason: 'no stack (--stack) or running local runtime serves this table, so no authorizer cache is known' };
}

/** Flush, wait out the decisions in flight, flush again (above). */
export async function flushAuthorizerCache(context: Pick<CommandContext, 'runtime'>): Promise<AuthorizerCacheOutcome> {
  const cache = cacheOf(context);
  if ('reason' in cache) return { flushed: false, reason: cache.reason };
  await cache.flush();
  await cache.waitOutDecisionsInFlight();
  await cache.flush();
  return { flushed: true, where: cache.where };
}

/**
 * Runs after a change that takes access away: a failed flush fails the command, saying that the
 * change itself is done and how to retry the flush alone.
 */
export async function flushAfter(
  change: string,
  context: Pick<CommandContext, 'runtime'>,
): Promise<AuthorizerCacheOutcome> {
  try {
    return await flushAuthorizerCache(context);
  } catch (err) {
    throw new Error(
      `${change}, but the authorizer cache could not be flushed (${(err as Error).message}): a decision cached ` +
        `before may still admit the key ` +
        'until the cache TTL ends. Retry with `npm run admin -- [--stack <name>] authorizer flush`',
      { cause: err },
    );
  }
}
