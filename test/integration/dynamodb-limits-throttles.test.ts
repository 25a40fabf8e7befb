import {
  BatchWriteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ThrottlingException,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { createLimitsTable, startEngineUnderTest, TEST_INDEX, TEST_TABLE, type EngineUnderTest } from '../support/limits-engine-table';

/**
 * Throughput budgets: with a budget of 1 unit per second, a second 1-unit request right after a
 * first is refused (the bucket refills 1 unit per second, so only a pause of a whole second
 * between the two could let it through). Each budget is tested alone, the others off (0). The
 * client never retries (maxAttempts 1): the SDK retries ThrottlingException on its own.
 */
const OFF = { partitionWriteUnits: 0, itemWriteUnits: 0, indexPartitionWriteUnits: 0, partitionReadUnits: 0, itemReadUnits: 0 };
const engines: EngineUnderTest[] = [];

async function engineWith(budgets: Partial<typeof OFF>): Promise<EngineUnderTest> {
  const engine = await startEngineUnderTest({ transactionHoldMs: 0, budgets: { ...OFF, ...budgets } });
  engines.push(engine);
  return engine;
}

let serial = 0;
const fresh = (name: string) => `${name}-${(serial += 1)}`;

beforeAll(async () => {
  await createLimitsTable((await engineWith({})).client);
});
afterAll(() => Promise.all(engines.map((e) => e.stop())));

const put = (engine: EngineUnderTest, pk: string, sk: string, extra: Record<string, { S: string }> = {}) =>
  engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { pk: { S: pk }, sk: { S: sk }, ...extra } }));

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err);

it('refuses a write over its partition-key value\'s budget with ThrottlingException naming the table, and counts it', async () => {
  const engine = await engineWith({ partitionWriteUnits: 1 });
  const pk = fresh('hot-partition');

  await put(engine, pk, 'a');
  const error = await failure(put(engine, pk, 'b'));
  await put(engine, fresh('cold-partition'), 'a');

  expect(error).toBeInstanceOf(ThrottlingException);
  expect((error as ThrottlingException).throttlingReasons).toEqual([{ reason: 'TableWriteKeyRangeThroughputExceeded', resource: expect.stringMatching(/:table\/limits$/) }]);
  expect(engine.proxy.stats().throttles).toMatchObject({ total: 1, byOperation: { PutItem: 1 }, byReason: { TableWriteKeyRangeThroughputExceeded: 1 } });
});

it('refuses a write over its item\'s budget while other items of the partition still write', async () => {
  const engine = await engineWith({ itemWriteUnits: 1 });
  const pk = fresh('item');

  await put(engine, pk, 'same');
  const error = await failure(put(engine, pk, 'same'));
  await put(engine, pk, 'other');

  expect(error).toBeInstanceOf(ThrottlingException);
});

it('refuses a write whose index entry lands in an index partition over its budget, naming the index', async () => {
  const engine = await engineWith({ indexPartitionWriteUnits: 1 });
  const group = fresh('hot-group');

  await put(engine, fresh('a'), 'x', { group: { S: group } });
  const error = await failure(put(engine, fresh('b'), 'x', { group: { S: group } }));
  await put(engine, fresh('c'), 'x', { group: { S: fresh('cold-group') } });

  expect((error as ThrottlingException).throttlingReasons).toEqual([{ reason: 'IndexWriteKeyRangeThroughputExceeded', resource: expect.stringMatching(new RegExp(`/index/${TEST_INDEX}$`)) }]);
});

it('cancels a transaction with ThrottlingError for the item over budget, and None for the others', async () => {
  // A transactional write of a small item costs 2 units: a budget of 2 admits one.
  const engine = await engineWith({ partitionWriteUnits: 2 });
  const hot = fresh('tx-hot');
  await engine.client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: TEST_TABLE, Item: { pk: { S: hot }, sk: { S: '1' } } } }] }));

  const error = await failure(
    engine.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: TEST_TABLE, Item: { pk: { S: fresh('tx-cold') }, sk: { S: '1' } } } },
          { Put: { TableName: TEST_TABLE, Item: { pk: { S: hot }, sk: { S: '2' } } } },
        ],
      }),
    ),
  );

  expect(error).toBeInstanceOf(TransactionCanceledException);
  expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual(['None', 'ThrottlingError']);
});

it('returns the throttled requests of a BatchWriteItem in UnprocessedItems, and answers ThrottlingException when all are', async () => {
  const engine = await engineWith({ partitionWriteUnits: 1 });
  const pk = fresh('batch');
  const item = (sk: string) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: sk } } } });

  const partly = await engine.client.send(new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [item('1'), item('2')] } }));
  const all = await failure(engine.client.send(new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [item('3')] } })));

  expect(partly.UnprocessedItems).toEqual({ [TEST_TABLE]: [item('2')] });
  expect(all).toBeInstanceOf(ThrottlingException);
});

it('refuses a read over its partition\'s read budget', async () => {
  const engine = await engineWith({ partitionReadUnits: 1 });
  const key = { pk: { S: fresh('read') }, sk: { S: 'x' } };
  const read = () => engine.client.send(new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }));

  await read();
  const error = await failure(read());

  expect((error as ThrottlingException).throttlingReasons?.[0].reason).toBe('TableReadKeyRangeThroughputExceeded');
});
