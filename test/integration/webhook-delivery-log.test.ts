import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoClient } from '../../local/dynamodb-local';
import { startLimitsProxy, type LimitsProxy } from '../../local/dynamodb-limits/limits-proxy';
import { createTestTable } from '../support/table';

/**
 * The delivery layout on DynamoDB's terms: each delivery a partition of its own, the endpoint's log
 * a gsi2 partition of entries that take 1 write unit per delivery whatever its attempts, and the
 * operator's listing one Query (and one BatchGetItem of its rows) per page at any size of the log. This file runs on a
 * limits-faithful engine of
 * its own (docs/local-engine.md), whose meters are its alone: the domain modules read
 * DYNAMODB_ENDPOINT when they load, so they are imported once it points there.
 */
type Modules = {
  aws: typeof import('../../lambdas/shared/aws');
  tenants: typeof import('../../lambdas/contexts/tenants/tenants');
  messages: typeof import('../../lambdas/contexts/texting/messages');
  endpoints: typeof import('../../lambdas/contexts/webhooks/endpoints');
  deliveries: typeof import('../../lambdas/contexts/webhooks/deliveries');
  operator: typeof import('../../lambdas/contexts/webhooks/operator');
  router: typeof import('../../lambdas/contexts/webhooks/route-change');
  sender: typeof import('../../lambdas/contexts/webhooks/deliver');
  queue: typeof import('../../lambdas/contexts/webhooks/queue');
  batch: typeof import('../../lambdas/shared/table/batch-write');
  ids: typeof import('../../lambdas/shared/ids');
  meter: typeof import('../support/read-meter');
};

let engine: LimitsProxy;
let m: Modules;
let server: http.Server;
let receiverUrl: string;
let tenantId: string;
/** Attempts the receiver still fails (500) before it answers 204 again. */
let failing = 0;

/**
 * An organization of its own per test: every endpoint of an organization subscribed to sms.received receives its texts.
 */
async function newOrganization(): Promise<void> {
  tenantId = (await m.tenants.createTenant({ name: 'Delivery log Org' })).id;
  await m.tenants.updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
}

beforeAll(async () => {
  engine = await startLimitsProxy({ upstream: process.env.DYNAMODB_LOCAL_ENDPOINT!, sharedDb: false });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  await createTestTable();
  m = {
    aws: await import('../../lambdas/shared/aws'),
    tenants: await import('../../lambdas/contexts/tenants/tenants'),
    messages: await import('../../lambdas/contexts/texting/messages'),
    endpoints: await import('../../lambdas/contexts/webhooks/endpoints'),
    deliveries: await import('../../lambdas/contexts/webhooks/deliveries'),
    operator: await import('../../lambdas/contexts/webhooks/operator'),
    router: await import('../../lambdas/contexts/webhooks/route-change'),
    sender: await import('../../lambdas/contexts/webhooks/deliver'),
    queue: await import('../../lambdas/contexts/webhooks/queue'),
    batch: await import('../../lambdas/shared/table/batch-write'),
    ids: await import('../../lambdas/shared/ids'),
    meter: await import('../support/read-meter'),
  };
  server = http.createServer((req, res) =>
    req.resume().on('end', () => {
      const status = failing > 0 ? 500 : 204;
      failing = Math.max(0, failing - 1);
      res.writeHead(status).end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/log`;
}, 60_000);

beforeEach(() => newOrganization(), 30_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await engine?.stop();
});

const inboundTextChange = (i: number) => {
  const now = new Date(Date.now() + i);
  const from = `+1303555${String(i).padStart(4, '0')}`;
  const message = {
    id: m.ids.uuidv7(now),
    tenantId,
    direction: 'inbound' as const,
    fromNumber: from,
    toNumber: '+15005550999',
    counterpartNumber: from,
    body: `Log ${i} `.repeat(40),
    status: 'received' as const,
    messageSid: `SMlog${i}${now.getTime()}`,
    agentId: null,
    isRead: false,
    createdAt: now.toISOString(),
  };
  return {
    eventId: `log-${now.getTime()}-${i}`,
    eventName: 'INSERT' as const,
    approximateCreationMs: now.getTime(),
    newImage: m.messages.toItem(message),
  };
};

/**
 * Routes `count` inbound texts to the endpoint and attempts every delivery, as the pipeline would;
 * the receiver fails the first `failFirst` attempts (each then retried at once).
 */
async function routeAndDeliver(endpointId: string, count: number, failFirst = 0): Promise<string[]> {
  let queued: import('../../lambdas/contexts/webhooks/queue').DeliveryMessage[] = [];
  const queue = { send: async (message: (typeof queued)[number]) => void queued.push(message) };
  const endpoints = m.router.endpointCache();
  await Promise.all(
    Array.from({ length: count }, (_, i) => m.router.routeChange(inboundTextChange(i), { queue, endpoints })),
  );
  const deliveryIds = queued.map((message) => message.deliveryId);
  expect(queued.every((message) => message.endpointId === endpointId)).toBe(true);
  failing = failFirst;
  while (queued.length > 0) {
    const batch = queued.splice(0, 10).map((message) => ({ ...message, notBefore: undefined }));
    const outcomes = await m.sender.processDeliveryMessages(batch, { queue, allowInsecureTargets: true });
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  }
  queued = [];
  return deliveryIds;
}

describe('an endpoint delivery log', () => {
  it('keeps each delivery in a partition of its own, and its log entry its keys alone', async () => {
    // Prepare
    const endpoint = await m.endpoints.addWebhookEndpoint(
      tenantId,
      { url: receiverUrl, events: ['sms.received'] },
      { allowInsecureTargets: true },
    );

    // Act
    const [deliveryId] = await routeAndDeliver(endpoint.id, 1);
    const { Items: entries } = await m.aws.dynamo.send(
      new QueryCommand({
        TableName: m.aws.TABLE_NAME,
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}#DELIVERIES#${endpoint.id}` },
      }),
    );

    // Assess
    const row = await m.deliveries.getDelivery(tenantId, deliveryId);
    expect(row).toMatchObject({
      id: deliveryId,
      status: 'succeeded',
      attempts: 1,
      body: expect.stringContaining('"sms.received"'),
    });
    expect(m.deliveries.deliveryKey(tenantId, deliveryId)).toEqual({
      pk: `T#${tenantId}#DELIVERY#${deliveryId}`,
      sk: 'DELIVERY',
    });
    expect(entries).toHaveLength(1);
    expect(Object.keys(entries![0]).sort()).toEqual(['gsi2pk', 'gsi2sk', 'id', 'pk', 'sk', 'tenantId']);
    expect((await m.operator.getDeliveryView(deliveryId)).id).toBe(deliveryId);
  }, 30_000);

  it('costs the log partition 1 write unit per delivery, failed attempts included, and no key more than that per delivery', async () => {
    // Prepare
    const endpoint = await m.endpoints.addWebhookEndpoint(
      tenantId,
      { url: receiverUrl, events: ['sms.received'] },
      { allowInsecureTargets: true },
    );
    const deliveries = 20;
    engine.reset();

    // Act: five of the first attempts fail and are made again.
    const ids = await routeAndDeliver(endpoint.id, deliveries, 5);
    const stats = engine.stats();

    // Assess: the log's entry is put with the delivery; claims and outcomes write the delivery's own partition.
    const log = stats.partitions[`${m.aws.TABLE_NAME}/gsi2 S:T#${tenantId}#DELIVERIES#${endpoint.id}`];
    expect(log.writeUnits).toBe(deliveries);
    const perDelivery = Object.values(stats.partitions).map((meter) => meter.writeUnits / deliveries);
    expect(Math.max(...perDelivery)).toBe(1);
    expect(stats.throttles.total).toBe(0);
    const rows = await Promise.all(ids.map((id) => m.deliveries.getDelivery(tenantId, id)));
    expect(rows.map((row) => [row!.status, row!.attempts]).filter(([, attempts]) => attempts === 2)).toHaveLength(5);
    expect(rows.every((row) => row!.status === 'succeeded')).toBe(true);
  }, 60_000);

  it('lists an endpoint with one Query of the page and one read of its rows, and recovers the same way, at 60 and at 3,000 deliveries', async () => {
    // Prepare: two endpoints' logs seeded straight into DynamoDB Local, every tenth delivery failed.
    const [small, large] = await Promise.all(
      [60, 3_000].map(async (size) => {
        const endpoint = await m.endpoints.addWebhookEndpoint(
          tenantId,
          { url: receiverUrl, events: ['sms.received'] },
          { allowInsecureTargets: true },
        );
        const at = Date.now() - 3_600_000;
        const rows = Array.from({ length: size }, (_, i) => {
          const delivery = m.deliveries.newDelivery(
            {
              id: m.ids.uuidv7(new Date(at + i)),
              tenantId,
              endpointId: endpoint.id,
              event: 'sms.received',
              eventId: `seed-${i}`,
              body: '{}',
            },
            new Date(at + i),
          );
          return m.deliveries.toItem(
            i % 10 === 0
              ? { ...delivery, status: 'failed', attempts: 8, nextRetryAt: null, lastError: 'HTTP 500' }
              : delivery,
          );
        });
        await m.batch.batchPutItems(
          DynamoDBDocumentClient.from(localDynamoClient(process.env.DYNAMODB_LOCAL_ENDPOINT!)),
          m.aws.TABLE_NAME,
          rows,
          8,
        );
        return endpoint;
      }),
    );
    const meter = m.meter.meterDynamoReads();
    const measure = async (read: () => Promise<unknown>) => {
      meter.reset();
      await read();
      return meter.snapshot();
    };

    try {
      // Act
      const listing = [
        await measure(() => m.operator.listDeliveries(small.id, 50)),
        await measure(() => m.operator.listDeliveries(large.id, 50)),
      ];
      const page = (endpointId: string) => () =>
        m.deliveries.failedDeliveriesPage(tenantId, endpointId, {
          eventsFromMs: 0,
          endedSince: new Date(0),
          limit: 50,
        });
      const recoveryPage = [await measure(page(small.id)), await measure(page(large.id))];

      // Assess: the endpoint's id lookup (gsi1), one Query of the log and one BatchGetItem of its rows, however long
      // the log.
      for (const cost of listing) expect(cost).toMatchObject({ calls: 3, itemsExamined: 1 + 50 + 50 });
      for (const cost of recoveryPage) expect(cost).toMatchObject({ calls: 2, itemsExamined: 50 + 50 });
      expect(listing[1].readUnits).toBe(listing[0].readUnits);
      expect(recoveryPage[1].readUnits).toBe(recoveryPage[0].readUnits);
    } finally {
      meter.stop();
    }
  }, 120_000);
});
