import { randomUUID } from 'node:crypto';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';

/**
 * One scope per Lambda invocation, for the Powertools logger the local runtime's functions share.
 *
 * In AWS a function's process runs one invocation at a time, so its module-scope Logger can hold
 * the invocation's Lambda context (`function_name`, `function_request_id`) and keys. The local
 * runtime runs every function in one process, requests side by side: with that one store, a record
 * named whichever function had set its context last.
 *
 * Powertools (2.35) keeps that state per invocation when `AWS_LAMBDA_MAX_CONCURRENCY` is set, as on
 * Lambda Managed Instances, where one process serves concurrent invocations: in the Lambda runtime's
 * InvokeStore (AsyncLocalStorage, `@aws/lambda-invoke-store`), each invocation run in a scope of its
 * own. The local runtime does what that runtime does. Outside every scope the store refuses
 * Powertools' first write ("No context available"), so the runtime's own work (its start, the
 * pollers, its shutdown) runs in one process scope, as a function's init phase does.
 *
 * Until `scopeInvocations` is called (tests using local/ modules as a library, the bench) both
 * wrappers only call `fn`: Powertools then keeps the one shared store, as before.
 */
let store: InvokeStoreBase | undefined;

/** The runtime's own scope: it never holds a Lambda context, so its records name no function. */
const processScope = {};

/**
 * Turns the per-invocation scopes on. Call first in the runtime's main, before any AWS SDK client
 * or Powertools logger runs: the first InvokeStore made is the process's (`globalThis.awslambda`),
 * and the SDK makes a single-invocation one on its first request unless this came before.
 */
export async function scopeInvocations(): Promise<void> {
  // Powertools reads it on every call and only asks that it be set; locally nothing limits concurrency.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY = '1000';
  store = await InvokeStore.getInstanceAsync(true);
}

/** Runs `fn` as one invocation: what Powertools records in it (context, keys, level) stays its own. */
export function runInvocation<T>(fn: () => T, awsRequestId: string = randomUUID()): T {
  return store ? store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: awsRequestId }, fn) : fn();
}

/**
 * Runs `fn` in the process scope. Work started from an invocation or from the process scope
 * inherits it; this is for callbacks that may come from elsewhere (a signal handler whose handle
 * something else created first).
 */
export function runOutsideInvocations<T>(fn: () => T): T {
  return store ? store.run(processScope, fn) : fn();
}
