import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchPutItems } from '../../lambdas/shared/table/batch-write';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'local' }));
const ddb = mockClient(client);
beforeEach(() => ddb.reset());
afterEach(() => jest.useRealTimers());

const items = (count: number) => Array.from({ length: count }, (_, i) => ({ pk: `p${i}`, sk: 's' }));
const putsOf = (call: number) =>
  (ddb.commandCalls(BatchWriteCommand)[call].args[0].input.RequestItems!.t ?? []).map((r) => r.PutRequest!.Item!.pk);

describe('bulk puts', () => {
  it('sends 25 items a call, every item once', async () => {
    // Prepare
    ddb.on(BatchWriteCommand).resolves({});
    // Act
    await batchPutItems(client, 't', items(60), 2);
    // Assess
    const sent = ddb.commandCalls(BatchWriteCommand).map((_, i) => putsOf(i));
    expect(sent.map((batch) => batch.length)).toEqual([25, 25, 10]);
    expect(new Set(sent.flat()).size).toBe(60);
  });

  it('sends again, after a pause, exactly what DynamoDB left unprocessed (a throttled part of the batch)', async () => {
    // Prepare
    jest.useFakeTimers();
    ddb
      .on(BatchWriteCommand)
      .resolvesOnce({ UnprocessedItems: { t: [{ PutRequest: { Item: { pk: 'p3', sk: 's' } } }] } })
      .resolves({});
    // Act
    const done = batchPutItems(client, 't', items(5));
    await jest.advanceTimersByTimeAsync(0);
    const callsBeforePause = ddb.commandCalls(BatchWriteCommand).length;
    await jest.advanceTimersByTimeAsync(50);
    await done;
    // Assess
    expect(callsBeforePause).toBe(1);
    expect(putsOf(1)).toEqual(['p3']);
  });

  it('gives up, with an error naming what is left, instead of spinning on a table that keeps refusing', async () => {
    // Prepare
    jest.useFakeTimers();
    ddb.on(BatchWriteCommand).resolves({ UnprocessedItems: { t: [{ PutRequest: { Item: { pk: 'p0', sk: 's' } } }] } });
    // Act
    const done = batchPutItems(client, 't', items(1)).catch((err: Error) => err);
    await jest.advanceTimersByTimeAsync(60_000);
    // Assess
    expect(await done).toEqual(new Error('batchPutItems: 1 items stayed unprocessed after 10 rounds'));
    expect(ddb).toHaveReceivedCommandTimes(BatchWriteCommand, 10);
  });
});
