import { IN_FLIGHT_DECISION_BOUND_MS } from '../../lambdas/handlers/authorizer/decision-time';
import { requestAuthorizerCacheFlush, requestAuthorizerDecisionsSettled } from '../runtime-control';
import type { CommandContext } from './registry';
import { deployedStackApi, type DeployedStackApi } from './aws-stack';
import { appliedTarget, deployedStack, type DeployedStack } from './target';

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

/** Finds a stack's API in the AWS calls of tests; the real one otherwise. */
export const stackLookup = { api: (region: string | undefined): DeployedStackApi => deployedStackApi(region) };

/**
 * The deployed stack that serves a table named with --table-name (no endpoint: a table in AWS):
 * the stack CloudFormation says made it, if its outputs name that table.
 */
async function stackServing(tableName: string): Promise<DeployedStack | { reason: string }> {
  const aws = stackLookup.api(process.env.AWS_REGION);
  try {
    const name = await aws.stackOfResource(tableName);
    if (!name) return { reason: `no CloudFormation stack made table ${tableName}` };
    const found = await deployedStack(name, process.env.AWS_REGION, aws);
    if (found.tableName !== tableName) return { reason: `stack ${name} serves table ${found.tableName}, not this one` };
    return found.stack;
  } catch (err) {
    return { reason: `the stack of table ${tableName} could not be found (${(err as Error).message})` };
  }
}

async function cacheOf(context: Pick<CommandContext, 'runtime'>): Promise<ReachableCache | { reason: string }> {
  const target = appliedTarget();
  const stack =
    target?.stack ?? (target && target.endpoint === undefined ? await stackServing(target.tableName) : undefined);
  if (stack && !('reason' in stack)) {
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
  if (stack) return stack;
  return { reason: 'no stack (--stack) or running local runtime serves this table, so no authorizer cache is known' };
}

/** Flush, wait out the decisions in flight, flush again (above). */
export async function flushAuthorizerCache(context: Pick<CommandContext, 'runtime'>): Promise<AuthorizerCacheOutcome> {
  const cache = await cacheOf(context);
  if ('reason' in cache) return { flushed: false, reason: cache.reason };
  await cache.flush();
  await cache.waitOutDecisionsInFlight();
  await cache.flush();
  return { flushed: true, where: cache.where };
}

const HOW_TO_FLUSH =
  'Flush it with `npm run admin -- --stack <stack> authorizer flush` (a deployed stage) or `npm run admin -- ' +
  '[--state-dir <dir>] authorizer flush` (the local runtime serving the table)';

/**
 * A change that took access away is made, but no cache was flushed: the command exits 1 with this,
 * printing what it would have printed (a rotated key is shown only once) and saying how to flush.
 */
export class UnflushedChangeError extends Error {
  constructor(
    message: string,
    readonly document: object,
  ) {
    super(message);
    this.name = 'UnflushedChangeError';
  }
}

/**
 * Runs after a change that takes access away and returns `result` with the flush's outcome. A flush
 * that fails, or a cache that cannot be found, fails the command (exit 1): the change itself is done,
 * and the message says how to flush; a decision cached before may admit the old access until the TTL.
 */
export async function flushAfter<T extends object>(
  change: string,
  context: Pick<CommandContext, 'runtime'>,
  result: T,
): Promise<T & { authorizerCache: AuthorizerCacheOutcome }> {
  let outcome: AuthorizerCacheOutcome;
  try {
    outcome = await flushAuthorizerCache(context);
  } catch (err) {
    throw new Error(
      `${change}, but the authorizer cache could not be flushed (${(err as Error).message}): a decision cached ` +
        `before may still admit the key ` +
        'until the cache TTL ends. Retry with `npm run admin -- [--stack <name>] authorizer flush`',
      { cause: err },
    );
  }
  if (!outcome.flushed) {
    throw new UnflushedChangeError(
      `${change}, but no authorizer cache was flushed (${outcome.reason}): a decision cached before may still ` +
        `admit the old access until the cache TTL ends (5 minutes by default). ${HOW_TO_FLUSH}`,
      { ...result, authorizerCache: outcome },
    );
  }
  return { ...result, authorizerCache: outcome };
}
