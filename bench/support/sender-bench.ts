import { uuidv7 } from '../../lambdas/shared/ids';
import { toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { insertDelivery, newDelivery } from '../../lambdas/contexts/webhooks/deliveries';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/contexts/webhooks/queue';
import { processDeliveryMessage } from '../../lambdas/contexts/webhooks/deliver';
import { inPool } from './load';
import { distribution, round, type Distribution } from './stats';
import { inboundText, processCpuMs, startReceiver, type Receiver } from './webhook-bench';

/**
 * 4b. The sender alone: deliveries already routed (rows written, messages built from real
 * events) are handed to the sender's logic in the shape AWS runs it: SQS batches of
 * SENDER_BATCH messages, up to SENDER_CONCURRENCY batches at once (the event source's
 * maxConcurrency, lib/constructs/webhook-pipeline.ts), so SENDER_BATCH x SENDER_CONCURRENCY
 * attempts in flight. Measures how many deliveries per second the sender keeps going to a fast
 * receiver, which the end-to-end scenarios cannot separate from the stream and the router.
 */
const SENDER_BATCH = 10;
const SENDER_CONCURRENCY = 20;

export type SenderScenario = {
  name: string;
  deliveries: number;
  verified: number;
  badSignatures: number;
  /** One attempt: handed to the sender -> read, signed, POSTed, verified, recorded. */
  attemptMs: Distribution;
  deliveriesPerSecond: number;
  nodeCpuMsPerDelivery: number;
  dynamodbCpuMsPerDelivery: number | null;
  /** Connections the receiver accepted: fewer than deliveries when the sender reuses them (keep-alive). */
  connections: number;
  outcomes: Record<string, number>;
};

/** Retries never happen with a receiver that answers 204; a queued retry would be a finding. */
const refusingQueue: DeliveryQueue = {
  async send() {
    throw new Error('the sender queued a retry: a delivery to the fast receiver failed');
  },
};

async function routedDeliveries(receiver: Receiver, endpoints: number, events: number): Promise<DeliveryMessage[]> {
  const tenant = await createTenant({ name: 'Sender bench' });
  await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
  const registered: WebhookEndpoint[] = await inPool(endpoints, 8, async (i) => {
    const path = `/sender/${tenant.id}/${i}`;
    const endpoint = await addWebhookEndpoint(
      tenant.id,
      { url: receiver.url(path), events: ['sms.received'] },
      { allowInsecureTargets: true },
    );
    receiver.secrets.set(path, endpoint.secret);
    return endpoint;
  });
  const messages: DeliveryMessage[] = [];
  for (let i = 0; i < events; i += 1) {
    const now = new Date();
    const message = inboundText(tenant.id, `+1303999${String(i).padStart(5, '0')}`, `senderbench${i}`, now);
    // The very body the router would freeze for this row.
    const event = deriveEvent({
      eventId: `sender-bench-${i}`,
      eventName: 'INSERT',
      approximateCreationMs: now.getTime(),
      newImage: messageItem(message),
    });
    if (!event) throw new Error('an inbound text row derives no event');
    for (const endpoint of registered) {
      const fields = {
        id: uuidv7(now),
        tenantId: tenant.id,
        endpointId: endpoint.id,
        event: event.type,
        eventId: event.id,
        body: event.body,
      };
      messages.push({
        deliveryId: fields.id,
        tenantId: tenant.id,
        endpointId: endpoint.id,
        cycle: 1,
        attempt: 1,
        body: event.body,
      });
      await insertDelivery(newDelivery(fields, now));
    }
  }
  return messages;
}

export async function measureSender(
  dynamodbPid: number | undefined,
  spec: { endpoints: number; events: number },
): Promise<SenderScenario> {
  const receiver = await startReceiver();
  try {
    const messages = await routedDeliveries(receiver, spec.endpoints, spec.events);
    const attemptMs: number[] = [];
    const outcomes: Record<string, number> = {};
    const batches = Array.from({ length: Math.ceil(messages.length / SENDER_BATCH) }, (_, i) =>
      messages.slice(i * SENDER_BATCH, (i + 1) * SENDER_BATCH),
    );

    receiver.resetCounters();
    const cpuBefore = process.cpuUsage();
    const jvmBefore = processCpuMs(dynamodbPid);
    const started = performance.now();
    await inPool(batches.length, SENDER_CONCURRENCY, (b) =>
      Promise.all(
        batches[b].map(async (message) => {
          const handedAt = performance.now();
          const outcome = await processDeliveryMessage(message, { queue: refusingQueue, allowInsecureTargets: true });
          attemptMs.push(performance.now() - handedAt);
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        }),
      ),
    );
    const wallS = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const jvmAfter = processCpuMs(dynamodbPid);

    // The receiver keys receipts by the event's message id; every endpoint gets each event once.
    const receipts = [...receiver.receipts.values()].flat();
    const verified = receipts.filter((r) => r.ok);
    return {
      name: `sender alone, ${spec.endpoints} endpoints x ${spec.events} events, ${SENDER_CONCURRENCY} x ${SENDER_BATCH} in flight`,
      deliveries: messages.length,
      verified: verified.length,
      badSignatures: receipts.length - verified.length,
      attemptMs: distribution(attemptMs),
      deliveriesPerSecond: round(verified.length / wallS, 1),
      nodeCpuMsPerDelivery: round((cpu.user + cpu.system) / 1000 / Math.max(1, verified.length), 2),
      dynamodbCpuMsPerDelivery:
        jvmBefore === null || jvmAfter === null
          ? null
          : round((jvmAfter - jvmBefore) / Math.max(1, verified.length), 2),
      connections: receiver.connections(),
      outcomes,
    };
  } finally {
    await receiver.close();
  }
}
