import type { Context, SQSEvent } from 'aws-lambda';
import { metrics } from '../../lambdas/shared/aws';

// The sender reads its queue at load; the attempt itself is the deliver module's (tested elsewhere).
process.env.WEBHOOK_QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
jest.mock('../../lambdas/contexts/webhooks/deliver', () => ({
  processDeliveryMessage: jest.fn(),
  attemptStatesFor: jest.fn(),
}));
const { processDeliveryMessage, attemptStatesFor } = jest.requireMock('../../lambdas/contexts/webhooks/deliver') as {
  processDeliveryMessage: jest.Mock;
  attemptStatesFor: jest.Mock;
};
const { handler } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../../lambdas/handlers/webhooks/sender') as typeof import('../../lambdas/handlers/webhooks/sender');

const context = {
  awsRequestId: 'req-1',
  functionName: 'sender',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

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

beforeEach(() => jest.clearAllMocks());

describe('the webhook sender Lambda', () => {
  it('counts deliveries that ended and attempts that failed, not deferred or stale ones', async () => {
    const addMetric = jest.spyOn(metrics, 'addMetric');
    attemptStatesFor.mockResolvedValue(new Map());
    for (const outcome of ['succeeded', 'failed', 'retrying', 'deferred', 'stale'])
      processDeliveryMessage.mockResolvedValueOnce(outcome);

    const result = await handler(sqsEvent(5), context);

    expect(result).toEqual({ batchItemFailures: [] });
    expect(addMetric.mock.calls.map(([name]) => name).sort()).toEqual([
      'WebhookAttemptsFailed',
      'WebhookDeliveriesFailed',
      'WebhookDeliveriesSucceeded',
    ]);
    addMetric.mockRestore();
  });

  it('reads the attempt state of the whole batch once and hands each message its own; a malformed message fails alone', async () => {
    // Prepare
    const event = sqsEvent(3);
    event.Records[1].body = '{ not json';
    const [first, , third] = event.Records.map((record) => {
      try {
        return JSON.parse(record.body);
      } catch {
        return undefined;
      }
    });
    attemptStatesFor.mockImplementation(
      async (messages: { deliveryId: string }[]) =>
        new Map(messages.map((m) => [m, { delivery: { id: m.deliveryId } }])),
    );
    processDeliveryMessage.mockResolvedValue('succeeded');

    // Act
    const result = await handler(event, context);

    // Assess
    expect(attemptStatesFor).toHaveBeenCalledTimes(1);
    expect(attemptStatesFor.mock.calls[0][0]).toEqual([first, third]);
    expect(
      processDeliveryMessage.mock.calls.map(([message, , state]) => [message.deliveryId, state?.delivery.id]),
    ).toEqual([
      ['d0', 'd0'],
      ['d2', 'd2'],
    ]);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
  });
});
