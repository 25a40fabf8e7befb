import { uuidv7 } from '../../shared/ids';
import {
  findDelivery,
  insertDelivery,
  listDeliveriesOf,
  newDelivery,
  requestRedelivery,
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
  const event: TestEvent = { id: uuidv7(now), type: TEST_EVENT_TYPE, createdAt: now.toISOString(), data: { endpointId: endpoint.id } };
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
