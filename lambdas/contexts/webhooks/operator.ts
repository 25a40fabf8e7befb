import { logger } from '../../shared/aws';
import { ValidationError } from '../../shared/errors';
import { uuidv7, uuidv7LowerBound } from '../../shared/ids';
import {
  deliveryIdOfPosition,
  failedDeliveriesPage,
  findDelivery,
  insertDelivery,
  listDeliveriesOf,
  logPosition,
  newDelivery,
  requestRedelivery,
  restartFailedDelivery,
  toView,
  type DeliveryView,
} from './deliveries';
import { findWebhookEndpoint } from './endpoints';
import type { TestEvent } from './event-schemas';
import { TEST_EVENT_TYPE } from './event-types';
import { derivedUuid } from './internal/derived-ids';

/**
 * The delivery log as the operator (portal or CLI) uses it. Nothing here talks to a queue: an
 * operator action changes the delivery row and the router, which sees the change on the stream,
 * queues the attempt. So the same call works against the local runtime and a deployed stack.
 */
export async function listDeliveries(endpointId: string, limit = 50): Promise<DeliveryView[]> {
  const endpoint = await findWebhookEndpoint(endpointId);
  return (await listDeliveriesOf(endpoint.tenantId, endpoint.id, limit)).map(toView);
}

export async function getDeliveryView(deliveryId: string): Promise<DeliveryView> {
  return toView(await findDelivery(deliveryId));
}

/** A new attempt cycle with the same delivery id and body (attempts restart at 1). */
export async function redeliver(deliveryId: string, now = new Date()): Promise<DeliveryView> {
  return toView(await requestRedelivery(deliveryId, now));
}

/**
 * Sends a signed `webhook.test` event to the endpoint through the normal pipeline (signing,
 * SSRF guard, retries), recorded in its delivery log like any other delivery. A test event has
 * its own type so that no receiver mistakes it for a real call or message.
 */
export async function sendTestEvent(endpointId: string, now = new Date()): Promise<DeliveryView> {
  const endpoint = await findWebhookEndpoint(endpointId);
  // About no resource: nothing to order it against (sequence 0).
  const event: TestEvent = {
    id: uuidv7(now),
    type: TEST_EVENT_TYPE,
    createdAt: now.toISOString(),
    sequence: 0,
    data: { endpointId: endpoint.id },
    request: null, // an operator's test, no API request
  };
  const delivery = newDelivery(
    {
      id: derivedUuid(now.getTime(), 'delivery', event.id, endpoint.id),
      tenantId: endpoint.tenantId,
      endpointId: endpoint.id,
      event: TEST_EVENT_TYPE,
      eventId: event.id,
      body: JSON.stringify(event),
    },
    now,
  );
  await insertDelivery(delivery, { enqueueRequested: true });
  return toView(delivery);
}

/**
 * How far before `--since` a recovery looks for events: the longest one attempt cycle can last
 * (7 waits of at most 60 minutes each, Retry-After included, plus 8 attempts and queueing), so a
 * delivery whose event came shortly before the outage but which ended failed during it is found.
 */
export const RECOVERY_LOOKBACK_MS = 8 * 3600 * 1000;
/** Items a recovery reads per Query page. */
const RECOVERY_PAGE_SIZE = 100;
export const DEFAULT_RECOVERY_MAX = 1000;
/** Items one run examines at most, failed or not: a run's cost is bounded whatever the endpoint's traffic. */
const MAX_EXAMINED_PER_RUN = 20_000;

export type RecoverOptions = {
  now?: Date;
  /** Deliveries queued at most by this run (default 1000); the summary says where to continue. */
  max?: number;
  /** Continue after this delivery (the `continueAfter` of a previous run's summary). */
  after?: string;
};

export type RecoverSummary = {
  endpointId: string;
  since: string;
  /** What was queued, oldest event first: each keeps its delivery id and body. */
  queued: { id: string; event: string; eventId: string }[];
  /** Deliveries read, failed or not (the cost of the run). */
  examined: number;
  /**
   * Failed deliveries another action restarted between the read and the restart (a concurrent recover or redeliver).
   */
  skipped: number;
  /** Set when the run stopped early: pass it as `--after` to go on. */
  continueAfter: string | null;
};

/**
 * `webhook recover`: sends again, with the same delivery ids and bodies, every delivery of the
 * endpoint that ended failed at or after `since`, oldest event first. Each is a new attempt cycle
 * started by a write conditioned on the delivery still being failed in the cycle that was read, so
 * running the recovery twice (or two at once) queues nothing twice: what the first queued is no
 * longer failed. A delivery that failed again after being recovered is failed anew, and a later
 * run sends it again. Reads the endpoint's delivery log (gsi2), one Query and one BatchGetItem per
 * page, from the events of RECOVERY_LOOKBACK_MS before `since`; no scan.
 */
export async function recoverFailedDeliveries(
  endpointId: string,
  since: Date,
  options: RecoverOptions = {},
): Promise<RecoverSummary> {
  const now = options.now ?? new Date();
  const max = options.max ?? DEFAULT_RECOVERY_MAX;
  if (Number.isNaN(since.getTime()) || since.getTime() > now.getTime())
    throw new ValidationError('since: must be a time in the past');
  const endpoint = await findWebhookEndpoint(endpointId);
  if (endpoint.disabledAt !== null) {
    throw new ValidationError(
      `endpoint: ${endpoint.id} is disabled (${endpoint.disabledReason}); enable it first (webhook enable), then ` +
        `recover`,
    );
  }
  const eventsFromMs = Math.max(0, since.getTime() - RECOVERY_LOOKBACK_MS);
  const summary: RecoverSummary = {
    endpointId: endpoint.id,
    since: since.toISOString(),
    queued: [],
    examined: 0,
    skipped: 0,
    continueAfter: null,
  };
  // A continuation point before the range would be refused by DynamoDB; it is simply the range's start.
  let startKey: Record<string, unknown> | undefined =
    options.after && options.after >= uuidv7LowerBound(eventsFromMs)
      ? logPosition(endpoint.tenantId, endpoint.id, options.after)
      : undefined;
  let lastId: string | undefined;
  do {
    const page = await failedDeliveriesPage(endpoint.tenantId, endpoint.id, {
      eventsFromMs,
      endedSince: since,
      limit: Math.min(RECOVERY_PAGE_SIZE, MAX_EXAMINED_PER_RUN - summary.examined),
      startKey,
    });
    summary.examined += page.examined;
    for (const delivery of page.deliveries) {
      if (summary.queued.length >= max) {
        summary.continueAfter = lastId ?? null;
        return finish(summary);
      }
      lastId = delivery.id;
      const restarted = await restartFailedDelivery(delivery, now);
      if (restarted) summary.queued.push({ id: delivery.id, event: delivery.event, eventId: delivery.eventId });
      else summary.skipped += 1;
    }
    startKey = page.lastKey;
    if (startKey) lastId = deliveryIdOfPosition(startKey);
  } while (startKey && summary.examined < MAX_EXAMINED_PER_RUN && summary.queued.length < max);
  summary.continueAfter = startKey ? (lastId ?? null) : null;
  return finish(summary);
}

function finish(summary: RecoverSummary): RecoverSummary {
  logger.info('Webhook deliveries recovered', {
    endpointId: summary.endpointId,
    since: summary.since,
    queued: summary.queued.length,
    examined: summary.examined,
    skipped: summary.skipped,
  });
  return summary;
}
