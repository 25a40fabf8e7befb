import { logger } from '../../shared/aws';
import { ValidationError } from '../../shared/errors';
import { DEFAULT_BACKOFF_BASE_MS, nextHop, retryAfterMs, waitAfterFailure } from './backoff';
import { claimAttempt, recordAttempt, type Delivery } from './deliveries';
import { applyAttemptHealth } from './endpoint-health';
import { signingSecrets, type WebhookEndpoint } from './endpoints';
import { DEFAULT_ATTEMPT_TIMEOUT_MS, excerpt, postPinned, type AttemptOutcome } from './http-post';
import { readAttemptState, readAttemptStates, type AttemptState } from './internal/attempt-state';
import { deliveryHeaders } from './internal/signing';
import {
  checkTargetUrl,
  resolveTarget,
  ResolutionTimeoutError,
  TargetRefusedError,
  type LookupAll,
} from './internal/ssrf';
import type { DeliveryMessage, DeliveryQueue } from './queue';

/**
 * The sender's logic, shared by the Lambda (SQS) and the local pipeline (timer queue): one
 * message is one attempt. A wait longer than the queue allows comes back as another hop; a
 * failure queues the next attempt after the backoff, then records it on the row.
 */
export type SenderDeps = {
  queue: DeliveryQueue;
  backoffBaseMs?: number;
  timeoutMs?: number;
  allowInsecureTargets?: boolean;
  lookup?: LookupAll;
  now?: () => number;
  /** How long every attempt may fail before the endpoint is disabled (endpoint-health.ts; 5 days). */
  failingLimitMs?: number;
};

export type SendResult = 'deferred' | 'stale' | 'succeeded' | 'retrying' | 'failed';

/**
 * A claim younger than this may still be working (an attempt takes at most its timeout, plus the
 * table writes around it); an older one belonged to a processor that crashed, and may be taken over.
 */
export const CLAIM_MARGIN_MS = 30_000;

/**
 * How old a claim must be before a copy of its message may take it over. A queue must not bring a
 * failed message back sooner (SQS: the visibility timeout, 180 s against 40 s), or the copy finds
 * its own claim still live every time and the chain is lost to the dead-letter queue.
 */
export const claimStaleAfterMs = (timeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS): number => timeoutMs + CLAIM_MARGIN_MS;

/**
 * Another processor is working on this very attempt (a duplicate queue message). Thrown so the
 * queue brings the message back after its visibility timeout: by then the attempt is recorded (the
 * copy is dropped as stale) or its claimer crashed (the copy takes the claim over).
 */
export class AttemptInProgressError extends Error {
  constructor(deliveryId: string, attempt: number) {
    super(`Attempt ${attempt} of delivery ${deliveryId} is being made by another processor`);
    this.name = 'AttemptInProgressError';
  }
}

/**
 * Sends the message's body: the bytes the router froze into the queue message (the row holds the
 * same). One deadline covers the whole attempt, DNS resolution included: the post gets what the
 * lookup left of it.
 */
async function attempt(
  delivery: Delivery,
  body: string,
  endpoint: WebhookEndpoint,
  approvedHosts: string[],
  deps: SenderDeps,
): Promise<AttemptOutcome> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const startedAt = performance.now();
  try {
    // Checked on every attempt, not only at registration: approvals and DNS answers change.
    const url = checkTargetUrl(endpoint.url, approvedHosts, deps);
    const target = await resolveTarget(url, { ...deps, timeoutMs });
    const leftMs = Math.floor(timeoutMs - (performance.now() - startedAt));
    if (leftMs <= 0)
      return { ok: false, error: `timeout: ${target.hostname} resolved too late to post within ${timeoutMs} ms` };
    const nowMs = (deps.now ?? Date.now)();
    const headers = deliveryHeaders({
      ...signingSecrets(endpoint, new Date(nowMs)),
      deliveryId: delivery.id,
      eventType: delivery.event,
      body,
      nowMs,
    });
    return await postPinned(target, headers, body, leftMs, timeoutMs);
  } catch (err) {
    if (err instanceof ResolutionTimeoutError) return { ok: false, error: excerpt(err.message) };
    if (err instanceof TargetRefusedError || err instanceof ValidationError)
      return { ok: false, error: excerpt(`refused target: ${err.message}`) };
    const code = (err as NodeJS.ErrnoException).code;
    if (code) return { ok: false, error: excerpt(`network error: ${code}`) }; // DNS: ENOTFOUND, EAI_AGAIN
    throw err;
  }
}

/** A message that must wait longer still: another hop, and nothing read. */
const isEarly = (message: DeliveryMessage, nowMs: number): boolean =>
  message.notBefore !== undefined && message.notBefore > nowMs;

/**
 * A batch of messages as the queue hands them over (SQS: up to 10 per invocation): the endpoints
 * and organizations of the batch read in one BatchGetItem, then each attempt on its own, all at
 * once. The outcome of each message in order: a rejected one goes back to the queue (a partial
 * batch failure).
 */
export async function processDeliveryMessages(
  messages: readonly DeliveryMessage[],
  deps: SenderDeps,
): Promise<PromiseSettledResult<SendResult>[]> {
  const states = await attemptStatesFor(messages, deps.now);
  return Promise.allSettled(messages.map((message) => processDeliveryMessage(message, deps, states.get(message))));
}

/**
 * The endpoint and organization of the attempts of a batch that are due now, in one BatchGetItem (the others only hop).
 */
export async function attemptStatesFor(
  messages: readonly DeliveryMessage[],
  now: () => number = Date.now,
): Promise<Map<DeliveryMessage, AttemptState>> {
  const nowMs = now();
  const due = messages.filter((message) => !isEarly(message, nowMs));
  const states = await readAttemptStates(due.map(({ tenantId, endpointId }) => ({ tenantId, endpointId })));
  return new Map(due.map((message, i) => [message, states[i]]));
}

/**
 * One message: one attempt. `state` when the batch read it already; else it is read here. The
 * attempt is claimed first, and the claim answers the delivery as it stands: a duplicate message,
 * an older cycle or a delivery already settled is refused by the claim's condition ('stale').
 */
export async function processDeliveryMessage(
  message: DeliveryMessage,
  deps: SenderDeps,
  state?: AttemptState,
): Promise<SendResult> {
  const now = deps.now ?? Date.now;
  if (isEarly(message, now())) {
    const hop = nextHop(message.notBefore!, now());
    await deps.queue.send({ ...message, notBefore: hop.notBefore }, hop.delayMs);
    return 'deferred';
  }

  const { endpoint, tenant } = state ?? (await readAttemptState(message.tenantId, message.endpointId));
  const delivery = await claimFor(message, deps, now);
  if (delivery === 'stale') return 'stale';
  const base = { cycle: message.cycle, attempt: message.attempt };

  if (!endpoint || endpoint.disabledAt !== null) {
    // Removed, or disabled (by the operator, or by the sender for its health): the attempt chain ends; `webhook
    // redeliver` starts it again.
    const lastError = endpoint ? 'endpoint disabled' : 'endpoint deleted';
    await recordAttempt(delivery, { ...base, status: 'failed', nextRetryAt: null, lastError, now: new Date(now()) });
    return 'failed';
  }

  const outcome = await attempt(delivery, message.body, endpoint, tenant?.approvedHosts ?? [], deps);
  return settleAttempt({ message, deps, now, delivery, endpoint, outcome, base });
}

/** One processor per attempt: a duplicate message must not post twice or start a second chain. */
async function claimFor(message: DeliveryMessage, deps: SenderDeps, now: () => number): Promise<Delivery | 'stale'> {
  const claimed = await claimAttempt(
    { tenantId: message.tenantId, id: message.deliveryId },
    { cycle: message.cycle, attempt: message.attempt, nowMs: now(), staleAfterMs: claimStaleAfterMs(deps.timeoutMs) },
  );
  if (claimed.claim === 'claimed') return claimed.delivery;
  if (claimed.claim === 'stale') return 'stale';
  throw new AttemptInProgressError(message.deliveryId, message.attempt);
}

/** An attempt made: what it settles on the delivery, the endpoint's health and the queue. */
type Attempted = {
  message: DeliveryMessage;
  deps: SenderDeps;
  now: () => number;
  delivery: Delivery;
  endpoint: WebhookEndpoint;
  outcome: AttemptOutcome;
  base: { cycle: DeliveryMessage['cycle']; attempt: number };
};

/** What the attempt leaves in the logs: ids and the status, never the receiver's response text. */
type AttemptLog = { deliveryId: string; endpointId: string; attempt: number; status: number | null };

async function settleAttempt(attempted: Attempted): Promise<SendResult> {
  const { message, deps, now, delivery, endpoint, outcome, base } = attempted;
  const log: AttemptLog = {
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    attempt: message.attempt,
    status: outcome.status ?? null,
  };
  // The receiver's response text stays in the delivery log only; logs get the status or the network cause.
  const cause = outcome.ok ? undefined : outcome.status === undefined ? outcome.error : `HTTP ${outcome.status}`;
  const health = await applyAttemptHealth(endpoint, outcome, new Date(now()), deps.failingLimitMs).catch(
    (err: unknown) => {
      // Bookkeeping of the endpoint's health must not cost the delivery its outcome: the next attempt judges again.
      logger.error('Could not record the health of a webhook endpoint', { ...log, error: (err as Error).message });
      return { disabled: false } as const;
    },
  );
  if (outcome.ok) {
    await recordAttempt(delivery, { ...base, status: 'succeeded', nextRetryAt: null, now: new Date(now()) });
    logger.info('Webhook delivered', log);
    return 'succeeded';
  }
  if (health.disabled) {
    // The endpoint is gone or has failed for days: no retry; `webhook enable`, then `webhook recover`.
    const lastError = `${outcome.error} (endpoint disabled: ${health.detail})`;
    await recordAttempt(delivery, { ...base, status: 'failed', nextRetryAt: null, lastError, now: new Date(now()) });
    logger.warn('Webhook delivery failed: endpoint disabled', { ...log, cause, reason: health.reason });
    return 'failed';
  }
  return retryOrFail(attempted, outcome, log, cause);
}

/** A failed attempt on a healthy endpoint: the next one queued after the backoff, or none past the last. */
async function retryOrFail(
  { message, deps, now, delivery, base }: Attempted,
  outcome: Extract<AttemptOutcome, { ok: false }>,
  log: AttemptLog,
  cause: string | undefined,
): Promise<SendResult> {
  const asked = retryAfterMs(outcome.retryAfter, now());
  const waitMs = waitAfterFailure(message.attempt, asked, deps.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS);
  if (waitMs === undefined) {
    await recordAttempt(delivery, {
      ...base,
      status: 'failed',
      nextRetryAt: null,
      lastError: outcome.error,
      now: new Date(now()),
    });
    logger.warn('Webhook delivery failed for good', { ...log, cause });
    return 'failed';
  }
  // One reading of the clock: a millisecond passing between two would shorten the wait.
  const attemptEndedAt = now();
  const dueAt = attemptEndedAt + waitMs;
  const hop = nextHop(dueAt, attemptEndedAt);
  // Queue first, record second: if recording fails (or the processor dies) the message comes back
  // and, unless the next attempt has been claimed already, takes the stale claim over and repeats
  // the attempt (at least once); the second copy of the next message then meets the claim on that
  // attempt, so the chain does not fork. The other order could leave a pending row with nothing queued.
  await deps.queue.send({ ...message, attempt: message.attempt + 1, notBefore: hop.notBefore }, hop.delayMs);
  await recordAttempt(delivery, {
    ...base,
    status: 'pending',
    nextRetryAt: new Date(dueAt).toISOString(),
    lastError: outcome.error,
    now: new Date(now()),
  });
  logger.info('Webhook attempt failed; retry queued', {
    ...log,
    cause,
    nextRetryAt: new Date(dueAt).toISOString(),
    ...(asked !== undefined && { retryAfterMs: asked }),
  });
  return 'retrying';
}
