import { Readable } from 'node:stream';
import {
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { toErrorResponse } from '../../lambdas/handlers/http/error-mapper';
import { TemporarilyUnavailableError } from '../../lambdas/shared/errors';
import { runWithDeadline } from '../../lambdas/shared/deadline';
import {
  contentionBackoffMs,
  ContentionRetryStrategy,
  CONTENTION_MAX_ATTEMPTS,
  isContention,
} from '../../lambdas/shared/table/contention';

/**
 * The retry policy every DynamoDB client of the service uses, driven through the real SDK client
 * (its retry middleware, its deserialisers) with a request handler that answers as DynamoDB does
 * over HTTP, so no network is involved.
 */
type Answer = { status: number; body: Record<string, unknown> };

const conflictCancellation: Answer = {
  status: 400,
  body: {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    Message:
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    CancellationReasons: [
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
    ],
  },
};
const conditionCancellation: Answer = {
  status: 400,
  body: {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    Message:
      'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, ' +
      'TransactionConflict]',
    CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }],
  },
};
const plainWriteConflict: Answer = {
  status: 400,
  body: {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
    message: 'Transaction is ongoing for the item',
  },
};
const ok: Answer = { status: 200, body: {} };

/** A client whose requests are answered, in order, by `answers` (the last one repeats). */
function clientAnswering(answers: Answer[]) {
  const sent: string[] = [];
  const client = new DynamoDBClient({
    region: 'local',
    endpoint: 'http://dynamodb.invalid',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    retryStrategy: new ContentionRetryStrategy(CONTENTION_MAX_ATTEMPTS, () => 0),
    requestHandler: {
      handle: async (request: { headers: Record<string, string> }) => {
        sent.push(request.headers['x-amz-target']);
        const answer = answers[Math.min(sent.length - 1, answers.length - 1)];
        return {
          response: {
            statusCode: answer.status,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: Readable.from([Buffer.from(JSON.stringify(answer.body))]),
          },
        };
      },
    },
  });
  return { client, sent };
}

const transaction = () =>
  new TransactWriteItemsCommand({
    TransactItems: [{ Put: { TableName: 't', Item: { pk: { S: 'a' }, sk: { S: 'b' } } } }],
  });

afterEach(() => jest.restoreAllMocks());

describe('which refusals are contention', () => {
  it.each([
    ['a throttle', { name: 'ThrottlingException' }, true],
    ['a partition over its throughput', { name: 'ProvisionedThroughputExceededException' }, true],
    ['the account over its request limit', { name: 'RequestLimitExceeded' }, true],
    ['a plain write to an item a transaction holds', { name: 'TransactionConflictException' }, true],
    [
      'a transaction cancelled for a conflict',
      {
        name: 'TransactionCanceledException',
        CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
      },
      true,
    ],
    [
      'a transaction cancelled for a throttled item',
      { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ThrottlingError' }] },
      true,
    ],
    [
      'a transaction cancelled for a condition',
      { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] },
      false,
    ],
    [
      'a condition beside a conflict',
      {
        name: 'TransactionCanceledException',
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }],
      },
      false,
    ],
    [
      'a cancellation naming no reason',
      { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }] },
      false,
    ],
    ['a failed condition', { name: 'ConditionalCheckFailedException' }, false],
    ['anything else', new Error('boom'), false],
  ])('%s', (_what, error, expected) => {
    // Act + Assess
    expect(isContention(error)).toBe(expected);
  });
});

describe('the pause between attempts', () => {
  it('doubles from 25 ms to at most 500 ms, half of it fixed and half random, under 2 s for all retries', () => {
    // Act
    const lowest = Array.from({ length: CONTENTION_MAX_ATTEMPTS - 1 }, (_, i) => contentionBackoffMs(i + 1, () => 0));
    const highest = Array.from({ length: CONTENTION_MAX_ATTEMPTS - 1 }, (_, i) => contentionBackoffMs(i + 1, () => 1));
    // Assess
    expect(lowest).toEqual([13, 25, 50, 100, 200, 250, 250]);
    expect(highest).toEqual([25, 50, 100, 200, 400, 500, 500]);
    expect(highest.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2_000);
  });
});

describe('the SDK client with the contention retry strategy', () => {
  it('sends a transaction cancelled for a conflict again until it commits', async () => {
    // Prepare
    const { client, sent } = clientAnswering([conflictCancellation, conflictCancellation, ok]);
    // Act
    await client.send(transaction());
    // Assess
    expect(sent).toEqual(Array(3).fill('DynamoDB_20120810.TransactWriteItems'));
  });

  it('sends a plain write refused for a transaction holding its item again', async () => {
    // Prepare
    const { client, sent } = clientAnswering([plainWriteConflict, ok]);
    // Act
    await client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'a' }, sk: { S: 'b' } } }));
    // Assess
    expect(sent).toHaveLength(2);
  });

  it('never sends again a transaction a condition refused: that is an answer, with its reasons', async () => {
    // Prepare
    const { client, sent } = clientAnswering([conditionCancellation, ok]);
    // Act
    const refused = client.send(transaction());
    // Assess
    await expect(refused).rejects.toBeInstanceOf(TransactionCanceledException);
    await expect(refused).rejects.toMatchObject({
      CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }],
    });
    expect(sent).toHaveLength(1);
  });

  it('gives up after its attempts with the contention error, which the API answers as 503 with Retry-After', async () => {
    // Prepare
    const { client, sent } = clientAnswering([conflictCancellation]);
    // Act
    const error = await client.send(transaction()).catch((err: unknown) => err);
    const response = toErrorResponse(error, 'req-1');
    // Assess
    expect(sent).toHaveLength(CONTENTION_MAX_ATTEMPTS);
    expect(isContention(error)).toBe(true);
    expect(response).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '1' },
      body: { code: 'temporarily_unavailable', requestId: 'req-1' },
    });
  });
});

describe('a write whose rows kept changing under it', () => {
  it('is answered as contention too: 503 with Retry-After, the reason logged, not shown', () => {
    // Act
    const response = toErrorResponse(
      new TemporarilyUnavailableError('updateContact: the contact kept changing'),
      'req-2',
    );
    // Assess
    expect(response).toMatchObject({
      statusCode: 503,
      headers: { 'Retry-After': '1' },
      body: { code: 'temporarily_unavailable', requestId: 'req-2' },
    });
    expect(JSON.stringify(response.body)).not.toContain('updateContact');
  });
});

describe('a request with a deadline (shared/deadline.ts)', () => {
  it('makes no retry past it: a conflict then is answered after one attempt, where without one it is retried', async () => {
    // Prepare
    const late = clientAnswering([plainWriteConflict, ok]);
    const timely = clientAnswering([plainWriteConflict, ok]);
    const put = () => new PutItemCommand({ TableName: 't', Item: { pk: { S: 'a' }, sk: { S: 'b' } } });

    // Act
    const refused = await runWithDeadline(Date.now() - 1, () => late.client.send(put())).catch((err: Error) => err);
    await runWithDeadline(Date.now() + 60_000, () => timely.client.send(put()));

    // Assess
    expect((refused as Error).name).toBe('TransactionConflictException');
    expect(late.sent).toHaveLength(1);
    expect(timely.sent).toHaveLength(2);
  });
});
