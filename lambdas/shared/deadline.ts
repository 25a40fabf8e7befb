import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The time by which a request's work must be done (epoch ms), carried through its async calls so
 * the SDK's retries (table/contention.ts) never carry a call past it. Without one, there is no limit.
 */
const current = new AsyncLocalStorage<number>();

export function runWithDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  return current.run(deadline, work);
}

/** Milliseconds left before the deadline of the work under way (Infinity when it has none). */
export function msLeft(now = Date.now()): number {
  const deadline = current.getStore();
  return deadline === undefined ? Infinity : deadline - now;
}

/** API Gateway's integration timeout: a function still running then is answered 504 for. */
export const API_GATEWAY_TIMEOUT_MS = 29_000;

/**
 * When a request's answer must leave the function: API Gateway's 29 s from when it took the request,
 * or the Lambda's own timeout, whichever is sooner, less `marginMs` for writing the answer.
 */
export function answerDeadline(
  requestTimeEpoch: number | undefined,
  remainingMs: number | undefined,
  marginMs: number,
  now = Date.now(),
): number {
  const gateway = (requestTimeEpoch ?? now) + API_GATEWAY_TIMEOUT_MS;
  const lambda = remainingMs === undefined ? Infinity : now + remainingMs;
  return Math.min(gateway, lambda) - marginMs;
}
