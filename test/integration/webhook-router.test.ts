import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { toItem as callToItem } from '../../lambdas/contexts/calls/calls';
import type { Item } from '../../lambdas/shared/table/dynamo';
import { uuidv7 } from '../../lambdas/shared/ids';
import type { Call } from '../../lambdas/contexts/calls/schemas';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import {
  deliveryKey,
  fromItem,
  getDelivery,
  listDeliveriesOf,
  recordAttempt,
} from '../../lambdas/contexts/webhooks/deliveries';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { listDeliveries, redeliver } from '../../lambdas/contexts/webhooks/operator';
import { DeliveryMessageSchema } from '../../lambdas/contexts/webhooks/queue';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/webhook-deliveries';
const sqs = mockClient(SQSClient);
type Handler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
let handler: Handler;

let tenantId: string;
let callsAndTexts: WebhookEndpoint;
let textsOnly: WebhookEndpoint;
let sequence = 0;

const context = { awsRequestId: 'test', functionName: 'router' } as Context;

function record(eventName: DynamoDBRecord['eventName'], newImage?: Item, oldImage?: Item): DynamoDBRecord {
  sequence += 1;
  return {
    eventID: `event-${uuidv7()}`,
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      SequenceNumber: String(sequence).padStart(21, '0'),
      NewImage: newImage && (marshall(newImage, { removeUndefinedValues: true }) as never),
      OldImage: oldImage && (marshall(oldImage, { removeUndefinedValues: true }) as never),
    },
  };
}

const completedCall = (): Call => ({
  id: uuidv7(),
  direction: 'outbound',
  fromNumber: '+14155559999',
  toNumber: '+14155550100',
  status: 'completed',
  startedAt: new Date().toISOString(),
  answeredAt: null,
  endedAt: new Date().toISOString(),
  durationSec: 42,
  isInternal: false,
  agentId: null,
  contactId: null,
});

/**
 * The endpoint's delivery rows as stored (their TTL included): its log (gsi2) names them, each is read from its own
 * partition.
 */
async function rowsOf(endpointId: string): Promise<Item[]> {
  const logged = await listDeliveriesOf(tenantId, endpointId, 100);
  const rows = await Promise.all(
    logged.map((entry) =>
      dynamo.send(
        new GetCommand({ TableName: TABLE_NAME, Key: deliveryKey(tenantId, entry.id), ConsistentRead: true }),
      ),
    ),
  );
  return rows.map((row) => row.Item!);
}

const sentMessages = () =>
  sqs
    .commandCalls(SendMessageCommand)
    .map((c) => ({ ...c.args[0].input, body: DeliveryMessageSchema.parse(JSON.parse(c.args[0].input.MessageBody!)) }));

beforeAll(async () => {
  process.env.WEBHOOK_QUEUE_URL = QUEUE_URL;
  await createTestTable();
  ({ handler } = (await import('../../lambdas/handlers/webhooks/router')) as unknown as { handler: Handler });
  tenantId = (await createTenant({ name: 'Router Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['hooks.example.com'] });
  callsAndTexts = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/all' });
  textsOnly = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/texts', events: ['sms.received'] });
}, 60_000);

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
});

describe('the router Lambda', () => {
  it('creates one delivery row per subscribed endpoint, even when the batch is replayed, and queues attempt 1 again only while it is pending', async () => {
    // Prepare
    const call = completedCall();
    const batch = { Records: [record('INSERT', callToItem(tenantId, call))] };

    // Act: the batch, its replay while the delivery is pending, and a replay after it succeeded.
    const first = await handler(batch, context);
    const replay = await handler(structuredClone(batch), context);
    const [pending] = await rowsOf(callsAndTexts.id);
    await recordAttempt(fromItem(pending), {
      cycle: 1,
      attempt: 1,
      status: 'succeeded',
      nextRetryAt: null,
      now: new Date(),
    });
    const late = await handler(structuredClone(batch), context);

    // Assess
    expect([first, replay, late].map((r) => r.batchItemFailures)).toEqual([[], [], []]);
    const rows = await rowsOf(callsAndTexts.id);
    expect(rows).toHaveLength(1);
    expect(pending).toMatchObject({ status: 'pending', attempts: 0, event: 'call.completed', cycle: 1 });
    expect(rows[0].ttl).toBeGreaterThan(Date.now() / 1000 + 29 * 24 * 3600);
    expect(await rowsOf(textsOnly.id)).toHaveLength(0);
    // The same message twice (the sender's attempt claim drops the copy), none once it succeeded.
    expect(sqs).toHaveReceivedCommandTimes(SendMessageCommand, 2);
    const [sent, copy] = sentMessages();
    expect(sent).toMatchObject({ QueueUrl: QUEUE_URL, DelaySeconds: 0 });
    expect(sent.body).toEqual({
      deliveryId: rows[0].id,
      tenantId,
      endpointId: callsAndTexts.id,
      cycle: 1,
      attempt: 1,
      body: rows[0].body,
    });
    expect(copy.body).toEqual(sent.body);
    expect(JSON.parse(sent.body.body).data.call).toEqual(call);
  });

  it('reports a record whose message could not be queued, and queues it when the record is retried', async () => {
    const batch = { Records: [record('INSERT', callToItem(tenantId, { ...completedCall(), status: 'busy' }))] };
    sqs.on(SendMessageCommand).rejectsOnce(new Error('SQS unavailable')).resolves({ MessageId: 'm' });

    // Partial batch response: Powertools throws when every record of a batch fails.
    const failed = await handler(
      {
        Records: [
          ...batch.Records,
          record('INSERT', { type: 'numberClaim', pk: `T#${tenantId}#NUMBER#+14155550100`, sk: 'NUMBER' }),
        ],
      },
      context,
    );
    const retried = await handler(batch, context);

    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: batch.Records[0].dynamodb!.SequenceNumber }]);
    expect(retried.batchItemFailures).toEqual([]);
    expect(sqs).toHaveReceivedCommandTimes(SendMessageCommand, 2);
    const deliveryIds = sentMessages().map((m) => m.body.deliveryId);
    expect(new Set(deliveryIds).size).toBe(1);
    expect(await getDelivery(tenantId, deliveryIds[0])).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('fans an inbound text out to every endpoint subscribed to sms.received', async () => {
    const text: Item = {
      pk: `T#${tenantId}`,
      sk: `MESSAGE#${uuidv7()}`,
      type: 'message',
      id: uuidv7(),
      tenantId,
      direction: 'inbound',
      fromNumber: '+14155550100',
      toNumber: '+14155559999',
      counterpartNumber: '+14155550100',
      body: 'hello',
      status: 'received',
      messageSid: 'SM1',
      agentId: null,
      isRead: false,
      createdAt: new Date().toISOString(),
    };

    await handler({ Records: [record('INSERT', text)] }, context);

    expect(
      sentMessages()
        .map((m) => m.body.endpointId)
        .sort(),
    ).toEqual([callsAndTexts.id, textsOnly.id].sort());
  });
});

describe('operator redelivery through the stream', () => {
  it('queues attempt 1 of a new cycle once, however often the change is seen', async () => {
    await handler(
      { Records: [record('INSERT', callToItem(tenantId, { ...completedCall(), status: 'failed' }))] },
      context,
    );
    const [original] = sentMessages();
    const before = (await rowsOf(callsAndTexts.id)).find((r) => r.id === original.body.deliveryId)!;
    sqs.resetHistory();

    const view = await redeliver(original.body.deliveryId);
    const after = (await rowsOf(callsAndTexts.id)).find((r) => r.id === original.body.deliveryId)!;
    const change = record('MODIFY', after, before);
    await handler({ Records: [change] }, context);
    await handler({ Records: [change] }, context);

    expect(view).toMatchObject({ id: original.body.deliveryId, cycle: 2, status: 'pending', attempts: 0 });
    expect(sqs).toHaveReceivedCommandTimes(SendMessageCommand, 1);
    expect(sentMessages()[0].body).toEqual({ ...original.body, cycle: 2 });
    const listed = await listDeliveries(callsAndTexts.id);
    expect(listed.find((d) => d.id === view.id)).toMatchObject({ cycle: 2 });
    expect(listed[0]).not.toHaveProperty('body');
  });
});
