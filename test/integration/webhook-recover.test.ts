import { createTestTable } from '../support/table';
import { ValidationError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import {
  getDelivery,
  insertDelivery,
  newDelivery,
  recordAttempt,
  type Delivery,
} from '../../lambdas/contexts/webhooks/deliveries';
import {
  addWebhookEndpoint,
  setWebhookEndpointEnabled,
  type WebhookEndpoint,
} from '../../lambdas/contexts/webhooks/endpoints';
import { recoverFailedDeliveries, RECOVERY_LOOKBACK_MS } from '../../lambdas/contexts/webhooks/operator';

/**
 * `webhook recover`: the failed deliveries of one endpoint since a time, sent again with the same
 * ids and bodies, oldest first, once however often (or however concurrently) it runs.
 */
const now = new Date('2026-11-26T12:00:00.000Z');
const hours = (n: number) => new Date(now.getTime() - n * 3600_000);

let tenantId: string;

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Recovery Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['hooks.example.com'] });
});

const newEndpoint = () =>
  addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/in', events: ['sms.received'] });

/** A delivery of an event that happened `eventAt`, which then ended as `ending` at `endedAt` (or is still pending). */
async function delivery(
  endpoint: WebhookEndpoint,
  eventAt: Date,
  ending: 'failed' | 'succeeded' | 'pending',
  endedAt = eventAt,
): Promise<Delivery> {
  const eventId = uuidv7(eventAt);
  const body = JSON.stringify({
    id: eventId,
    type: 'sms.received',
    createdAt: eventAt.toISOString(),
    sequence: 1,
    data: { message: { id: uuidv7(eventAt) } },
  });
  const row = newDelivery(
    { id: uuidv7(eventAt), tenantId, endpointId: endpoint.id, event: 'sms.received', eventId, body },
    eventAt,
  );
  await insertDelivery(row);
  if (ending !== 'pending')
    await recordAttempt(row, {
      cycle: 1,
      attempt: 8,
      status: ending,
      nextRetryAt: null,
      lastError: 'HTTP 500',
      now: endedAt,
    });
  return row;
}

describe('webhook recover', () => {
  it('queues again exactly the deliveries that ended failed since the time, oldest event first, with the same ids and bodies', async () => {
    // Prepare
    const endpoint = await newEndpoint();
    const failedBefore = await delivery(endpoint, hours(10), 'failed', hours(9));
    const failedDuring = await delivery(endpoint, hours(5), 'failed', hours(2)); // its event came before the outage, its failure during it
    const failedLater = await delivery(endpoint, hours(2), 'failed', hours(1));
    await delivery(endpoint, hours(1.5), 'succeeded');
    await delivery(endpoint, hours(0.5), 'pending');

    // Act
    const summary = await recoverFailedDeliveries(endpoint.id, hours(3), { now });

    // Assess
    expect(summary).toMatchObject({
      endpointId: endpoint.id,
      since: hours(3).toISOString(),
      skipped: 0,
      continueAfter: null,
    });
    expect(summary.queued.map((q) => q.id)).toEqual([failedDuring.id, failedLater.id]);
    for (const original of [failedDuring, failedLater]) {
      // A new cycle the router queues (enqueueRequested), same id, same frozen body.
      expect(await getDelivery(tenantId, original.id)).toMatchObject({
        id: original.id,
        body: original.body,
        status: 'pending',
        cycle: 2,
        attempts: 0,
      });
    }
    expect(await getDelivery(tenantId, failedBefore.id)).toMatchObject({ status: 'failed', cycle: 1 });
  });

  it('queues nothing twice: a second run, and two runs at once, queue each failed delivery once', async () => {
    // Prepare
    const [sequential, concurrent] = [await newEndpoint(), await newEndpoint()];
    for (const endpoint of [sequential, concurrent])
      for (const h of [3, 2, 1]) await delivery(endpoint, hours(h), 'failed', hours(h - 0.5));

    // Act
    const first = await recoverFailedDeliveries(sequential.id, hours(4), { now });
    const second = await recoverFailedDeliveries(sequential.id, hours(4), { now });
    const racing = await Promise.all([
      recoverFailedDeliveries(concurrent.id, hours(4), { now }),
      recoverFailedDeliveries(concurrent.id, hours(4), { now }),
    ]);

    // Assess
    expect(first.queued).toHaveLength(3);
    expect(second.queued).toEqual([]);
    const racedIds = racing.flatMap((run) => run.queued.map((q) => q.id));
    expect(racedIds).toHaveLength(3);
    expect(new Set(racedIds).size).toBe(3);
  });

  it('stops at --max and goes on from where it stopped with --after', async () => {
    // Prepare
    const endpoint = await newEndpoint();
    const rows = [];
    for (const h of [3, 2, 1]) rows.push(await delivery(endpoint, hours(h), 'failed', hours(h - 0.5)));

    // Act
    const part = await recoverFailedDeliveries(endpoint.id, hours(4), { now, max: 2 });
    const rest = await recoverFailedDeliveries(endpoint.id, hours(4), { now, after: part.continueAfter! });

    // Assess
    expect(part.queued.map((q) => q.id)).toEqual([rows[0].id, rows[1].id]);
    expect(part.continueAfter).toBe(rows[1].id);
    expect(rest.queued.map((q) => q.id)).toEqual([rows[2].id]);
    expect(rest.continueAfter).toBeNull();
  });

  it('reads back from the events of the longest attempt cycle before the time, no further', async () => {
    // Prepare: a delivery redelivered by hand long after its event, failing again during the outage
    const endpoint = await newEndpoint();
    const old = await delivery(
      endpoint,
      new Date(hours(3).getTime() - RECOVERY_LOOKBACK_MS - 60_000),
      'failed',
      hours(1),
    );

    // Act
    const summary = await recoverFailedDeliveries(endpoint.id, hours(3), { now });

    // Assess: outside the range read (documented; `webhook redeliver` sends it)
    expect(summary.queued).toEqual([]);
    expect(summary.examined).toBe(0);
    expect(await getDelivery(tenantId, old.id)).toMatchObject({ status: 'failed' });
  });

  it('refuses a disabled endpoint (enable it first) and a time in the future', async () => {
    const endpoint = await newEndpoint();
    await setWebhookEndpointEnabled(endpoint.id, false);

    await expect(recoverFailedDeliveries(endpoint.id, hours(1), { now })).rejects.toThrow(
      /disabled \(operator\); enable it first/,
    );
    await expect(recoverFailedDeliveries(endpoint.id, new Date(now.getTime() + 1000), { now })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});
