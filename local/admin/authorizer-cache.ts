import { requestAuthorizerCacheFlush } from '../runtime-control';
import type { CommandContext } from './registry';
import { appliedTarget } from './target';

/**
 * Revocation and loss of API access that bite at once. API Gateway caches each key's authorizer
 * decision (`authorizerCacheTtlSeconds`, 300 s by default), and reading the key and organization
 * rows on every request instead would cost two reads per request. So the commands that take
 * access away (`key revoke`, `key rotate`, `tenant update` of a plan, name or slug) change the
 * table, then drop the cached decisions: on a deployed stage with FlushStageAuthorizersCache, on
 * the local runtime through its control listener (local/runtime-control.ts). The next request of
 * every key of the stage is decided afresh from the table (a few authorizer invocations, once:
 * docs/capacity.md).
 */
export type AuthorizerCacheOutcome =
  | { flushed: true; where: string }
  /** A table no stack or running runtime serves: no cache to flush. */
  | { flushed: false; reason: string };

export async function flushAuthorizerCache(context: Pick<CommandContext, 'runtime'>): Promise<AuthorizerCacheOutcome> {
  const stack = appliedTarget()?.stack;
  if (stack) {
    await stack.aws.flushAuthorizerCache({ restApiId: stack.restApiId, stageName: stack.stageName });
    return { flushed: true, where: `stage ${stack.stageName} of API ${stack.restApiId} (stack ${stack.name})` };
  }
  const control = context.runtime?.control;
  if (control) {
    await requestAuthorizerCacheFlush(control);
    return { flushed: true, where: `the local runtime at ${context.runtime?.apiBaseUrl}` };
  }
  if (context.runtime) return { flushed: false, reason: 'the running local runtime is older than its control listener: restart it' };
  return { flushed: false, reason: 'no stack (--stack) or running local runtime serves this table, so no authorizer cache is known' };
}

/**
 * Runs after a change that takes access away: a failed flush fails the command, saying that the
 * change itself is done and how to retry the flush alone.
 */
export async function flushAfter(change: string, context: Pick<CommandContext, 'runtime'>): Promise<AuthorizerCacheOutcome> {
  try {
    return await flushAuthorizerCache(context);
  } catch (err) {
    throw new Error(
      `${change}, but the authorizer cache could not be flushed (${(err as Error).message}): a decision cached before may still admit the key ` +
        'until the cache TTL ends. Retry with `npm run admin -- [--stack <name>] authorizer flush`',
      { cause: err },
    );
  }
}
