import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { callKey, recordCall } from '../../lambdas/contexts/calls/calls';
import { uuidv7 } from '../../lambdas/shared/ids';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { startWebhookPipeline, type WebhookPipeline } from '../../local/webhook-pipeline';
import { webhookAdd, webhookDeliveries, webhookRedeliver, webhookTest } from '../../local/admin/webhook-commands';

type Received = { headers: IncomingHttpHeaders; body: string };

/** Waits (bounded) for something that arrives asynchronously. */
async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let pipeline: WebhookPipeline;
let server: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const failNext: number[] = [];
let tenantId: string;
let endpoint: { id: string; secret: string };

beforeAll(async () => {
  await createTestTable();
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(failNext.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

  tenantId = (await createTenant({ name: 'Pipeline Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  const added = await webhookAdd({ tenant: tenantId, url: receiverUrl, allowInsecureTargets: true });
  endpoint = { id: added.endpoint.id, secret: added.secret };

  pipeline = await startWebhookPipeline({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: TABLE_NAME,
    backoffBaseMs: 50,
    allowInsecureTargets: true,
    attemptTimeoutMs: 2_000,
  });
}, 60_000);

afterAll(async () => {
  await pipeline?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const deliveriesOfType = (type: string) => received.filter((r) => r.headers['x-service-event'] === type);

describe('the local webhook pipeline', () => {
  it('delivers a signed call.completed when a call ends', async () => {
    // Prepare
    const call = await recordCall(tenantId, {
      direction: 'inbound',
      fromNumber: '+14155550177',
      toNumber: '+14155559999',
      status: 'in-progress',
      startedAt: new Date(),
    });

    // Act: the call ends
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: callKey(tenantId, call.id),
        UpdateExpression: 'SET #status = :status, durationSec = :d',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': 'completed', ':d': 61 },
      }),
    );

    // Assess
    const delivery = await eventually(() => deliveriesOfType('call.completed')[0], 'call.completed');
    expect(verifyDelivery(delivery.headers, delivery.body, endpoint.secret)).toEqual({ ok: true });
    const body = JSON.parse(delivery.body);
    expect(body).toMatchObject({
      type: 'call.completed',
      data: { call: { ...call, status: 'completed', durationSec: 61 } },
    });
    expect(deliveriesOfType('call.completed')).toHaveLength(1);
  }, 30_000);

  it('retries an inbound text until the receiver recovers, with one delivery id', async () => {
    failNext.push(500, 503);
    const message = {
      pk: `T#${tenantId}`,
      sk: `MESSAGE#${uuidv7()}`,
      type: 'message',
      id: uuidv7(),
      tenantId,
      direction: 'inbound',
      fromNumber: '+14155550188',
      toNumber: '+14155559999',
      counterpartNumber: '+14155550188',
      body: 'Are you open today?',
      status: 'received',
      messageSid: 'SM42',
      agentId: null,
      isRead: false,
      createdAt: new Date().toISOString(),
    };

    await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: message }));

    const attempts = await eventually(
      () => (deliveriesOfType('sms.received').length >= 3 ? deliveriesOfType('sms.received') : undefined),
      'three attempts',
    );
    expect(new Set(attempts.map((a) => a.headers['x-service-delivery'])).size).toBe(1);
    expect(JSON.parse(attempts[2].body).data.message).toMatchObject({ id: message.id, body: 'Are you open today?' });
    const logged = await eventually(async () => {
      const { deliveries } = await webhookDeliveries(endpoint.id);
      const row = deliveries.find((d) => d.event === 'sms.received');
      return row?.status === 'succeeded' ? row : undefined;
    }, 'the delivery log to show success');
    expect(logged).toMatchObject({ attempts: 3, lastError: 'HTTP 503' });
  }, 30_000);

  it('gives two texts received within one second two events in order, to the millisecond, and lists their deliveries newest first', async () => {
    // Prepare
    const text = (n: number) => ({
      from: '+14155550199',
      to: '+14155559999',
      body: `Text ${n}`,
      messageSid: `SM-order-${n}-${uuidv7()}`,
      receivedAt: new Date(),
    });

    // Act: the second text is stored as soon as the first is
    const first = await receiveInboundMessage(tenantId, text(1));
    const second = await receiveInboundMessage(tenantId, text(2));

    // Assess
    const events = await eventually(() => {
      const found = deliveriesOfType('sms.received')
        .map((r) => JSON.parse(r.body))
        .filter((e) => [first.message.id, second.message.id].includes(e.data.message.id));
      return found.length === 2 ? found : undefined;
    }, 'both sms.received events');
    const [a, b] = [first, second].map((t) => events.find((e) => e.data.message.id === t.message.id));
    expect(a.id).not.toBe(b.id);
    expect(a.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(a.createdAt)).toBeLessThan(Date.parse(b.createdAt));
    expect(a.id < b.id).toBe(true);
    const { deliveries } = await webhookDeliveries(endpoint.id);
    const order = deliveries.map((d) => d.eventId).filter((id) => id === a.id || id === b.id);
    expect(order).toEqual([b.id, a.id]);
  }, 30_000);

  it('sends a test event and redelivers a delivery through the same pipeline', async () => {
    const { delivery: test } = await webhookTest(endpoint.id, { waitMs: 10_000, pollMs: 50 });

    expect(test).toMatchObject({ event: 'webhook.test', status: 'succeeded', attempts: 1 });
    const testRequest = deliveriesOfType('webhook.test')[0];
    expect(verifyDelivery(testRequest.headers, testRequest.body, endpoint.secret).ok).toBe(true);
    expect(JSON.parse(testRequest.body)).toMatchObject({ type: 'webhook.test', data: { endpointId: endpoint.id } });

    const { delivery: again } = await webhookRedeliver(test.id);
    const repeated = await eventually(
      () => (deliveriesOfType('webhook.test').length >= 2 ? deliveriesOfType('webhook.test')[1] : undefined),
      'the redelivery',
    );

    expect(again).toMatchObject({ id: test.id, cycle: 2, status: 'pending' });
    expect(repeated.headers['x-service-delivery']).toBe(test.id);
    expect(repeated.body).toBe(testRequest.body);
  }, 30_000);
});
