import { logger } from '../../shared/aws';
import {
  enqueueRequestOf,
  getDelivery,
  insertDelivery,
  markEnqueued,
  needsEnqueue,
  newDelivery,
  type Delivery,
} from './deliveries';
import { listWebhookEndpoints, subscribedTo, type WebhookEndpoint } from './endpoints';
import type { WebhookEventType } from './event-types';
import { deriveEvent, type DerivedEvent } from './events';
import { derivedUuid } from './internal/derived-ids';
import type { DeliveryQueue } from './queue';
import type { StreamChange } from './stream-change';

/**
 * The router's logic, shared by the Lambda (DynamoDB Streams) and the local pipeline (stream
 * poller): a row change -> an event -> one delivery per subscribed endpoint -> one queue message
 * per delivery. Every step is safe to repeat: a replayed record derives the same ids, the
 * conditional write refuses a second row, and a delivery still pending is queued again, a copy
 * the sender's attempt claim drops (at least once; nothing is lost between storing and queueing).
 */
export type RouterDeps = {
  queue: DeliveryQueue;
  /** Endpoint lookups shared by the records of one batch (organizations repeat within a batch). */
  endpoints?: EndpointCache;
  now?: () => Date;
};

export type RouteResult = { eventId?: string; deliveriesCreated: number; enqueued: number };

export type EndpointCache = (tenantId: string, type: WebhookEventType) => Promise<WebhookEndpoint[]>;

/**
 * One read of an organization's endpoints for a whole batch of records, whatever their event
 * types: a batch of 100 events of one organization reads its endpoints once, not 100 times.
 */
export function endpointCache(): EndpointCache {
  const cache = new Map<string, Promise<WebhookEndpoint[]>>();
  return async (tenantId, type) => {
    if (!cache.has(tenantId)) {
      // A failed lookup is not kept: the record's retry asks again.
      const lookup = listWebhookEndpoints(tenantId).catch((err: unknown) => {
        cache.delete(tenantId);
        throw err;
      });
      cache.set(tenantId, lookup);
    }
    return subscribedTo(await cache.get(tenantId)!, type);
  };
}

/** Queues attempt 1 of the delivery's current cycle. */
const sendAttemptOne = (delivery: Delivery, queue: DeliveryQueue): Promise<void> =>
  queue.send(
    {
      deliveryId: delivery.id,
      tenantId: delivery.tenantId,
      endpointId: delivery.endpointId,
      cycle: delivery.cycle,
      attempt: 1,
      body: delivery.body,
    },
    0,
  );

/** An operator's request: queues attempt 1 of the new cycle, then notes on the row that it did. */
async function enqueueRequested(delivery: Delivery, queue: DeliveryQueue): Promise<void> {
  await sendAttemptOne(delivery, queue);
  // After the send: a crash in between means a replay sends again (at least once), never zero times.
  await markEnqueued(delivery, delivery.cycle);
}

async function fanOut(
  event: DerivedEvent,
  endpoint: WebhookEndpoint,
  deps: RouterDeps,
): Promise<{ created: boolean; enqueued: boolean }> {
  const now = deps.now?.() ?? new Date();
  const candidate = newDelivery(
    {
      id: derivedUuid(Date.parse(event.createdAt), 'delivery', event.id, endpoint.id),
      tenantId: event.tenantId,
      endpointId: endpoint.id,
      event: event.type,
      eventId: event.id,
      body: event.body,
    },
    now,
  );
  const { delivery, created } = await insertDelivery(candidate);
  // A replay finds the row: queued again while it is pending, since the first run may have died
  // before queueing (the row cannot say: noting it would be another write of every delivery).
  if (delivery.status !== 'pending') return { created, enqueued: false };
  await sendAttemptOne(delivery, deps.queue);
  return { created, enqueued: true };
}

export async function routeChange(change: StreamChange, deps: RouterDeps): Promise<RouteResult> {
  const event = deriveEvent(change);
  if (event) {
    const endpoints = await (deps.endpoints ?? endpointCache())(event.tenantId, event.type);
    const results = await Promise.all(endpoints.map((endpoint) => fanOut(event, endpoint, deps)));
    const result = {
      eventId: event.id,
      deliveriesCreated: results.filter((r) => r.created).length,
      enqueued: results.filter((r) => r.enqueued).length,
    };
    logger.info('Webhook event routed', { eventType: event.type, tenantId: event.tenantId, ...result });
    return result;
  }
  const request = enqueueRequestOf(change);
  if (request) {
    // The image may be stale (the request already served); the row decides.
    const delivery = await getDelivery(request.tenantId, request.id);
    if (delivery && needsEnqueue(delivery)) {
      await enqueueRequested(delivery, deps.queue);
      logger.info('Webhook delivery queued on request', { deliveryId: delivery.id, cycle: delivery.cycle });
      return { deliveriesCreated: 0, enqueued: 1 };
    }
  }
  return { deliveriesCreated: 0, enqueued: 0 };
}
