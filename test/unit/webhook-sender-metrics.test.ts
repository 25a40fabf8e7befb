import type { Context, SQSEvent } from 'aws-lambda';
import { metrics } from '../../lambdas/shared/aws';

// The sender reads its queue at load; the attempt itself is the deliver module's (tested elsewhere).
process.env.WEBHOOK_QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
jest.mock('../../lambdas/contexts/webhooks/deliver', () => ({ processDeliveryMessage: jest.fn() }));
const { processDeliveryMessage } = jest.requireMock('../../lambdas/contexts/webhooks/deliver') as { processDeliveryMessage: jest.Mock };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { handler } = require('../../lambdas/handlers/webhooks/sender') as typeof import('../../lambdas/handlers/webhooks/sender');

const context = { awsRequestId: 'req-1', functionName: 'sender', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

const sqsEvent = (count: number): SQSEvent => ({
  Records: Array.from({ length: count }, (_, i) => ({
    messageId: `m${i}`,
    receiptHandle: `r${i}`,
    body: JSON.stringify({ deliveryId: `d${i}`, tenantId: 't', endpointId: 'e', cycle: 1, attempt: 1, body: '{}' }),
    attributes: {} as SQSEvent['Records'][number]['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:deliveries',
    awsRegion: 'eu-west-1',
  })),
});

describe('the webhook sender metrics', () => {
  it('counts deliveries that ended and attempts that failed, not deferred or stale ones', async () => {
    const addMetric = jest.spyOn(metrics, 'addMetric');
    for (const outcome of ['succeeded', 'failed', 'retrying', 'deferred', 'stale']) processDeliveryMessage.mockResolvedValueOnce(outcome);

    const result = await handler(sqsEvent(5), context);

    expect(result).toEqual({ batchItemFailures: [] });
    expect(addMetric.mock.calls.map(([name]) => name).sort()).toEqual([
      'WebhookAttemptsFailed',
      'WebhookDeliveriesFailed',
      'WebhookDeliveriesSucceeded',
    ]);
    addMetric.mockRestore();
  });
});
