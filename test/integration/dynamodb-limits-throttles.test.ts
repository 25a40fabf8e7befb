import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ThrottlingException,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DEFAULT_BUDGETS } from '../../local/dynamodb-limits/limits-proxy';
import {
  createLimitsTable,
  startEngineUnderTest,
  TEST_INDEX,
  TEST_TABLE,
  type EngineUnderTest,
} from '../support/limits-engine-table';

/**
 * Throughput budgets: with a budget of 1 unit per second, a second 1-unit request right after a
 * first is refused (the bucket refills 1 unit per second, so only a pause of a whole second
 * between the two could let it through). Each budget is tested alone, the others off (0). The
 * client never retries (maxAttempts 1): the SDK retries ThrottlingException on its own.
 */
const OFF = {
  partitionWriteUnits: 0,
  itemWriteUnits: 0,
  indexPartitionWriteUnits: 0,
  partitionReadUnits: 0,
  itemReadUnits: 0,
};
const engines: EngineUnderTest[] = [];

async function engineWith(budgets: Partial<typeof OFF>): Promise<EngineUnderTest> {
  const engine = await startEngineUnderTest({ transactionHoldMs: 0, budgets: { ...OFF, ...budgets } });
  engines.push(engine);
  return engine;
}

let serial = 0;
const fresh = (name: string) => `${name}-${(serial += 1)}`;

/** An engine with every budget off, to prepare rows without spending any other engine's budgets. */
let unlimited: EngineUnderTest;

beforeAll(async () => {
  unlimited = await engineWith({});
  await createLimitsTable(unlimited.client);
});
afterAll(() => Promise.all(engines.map((e) => e.stop())));

const put = (engine: EngineUnderTest, pk: string, sk: string, extra: Record<string, { S: string }> = {}) =>
  engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { pk: { S: pk }, sk: { S: sk }, ...extra } }));

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err,
  );

it("refuses a write over its partition-key value's budget with ThrottlingException naming the table, and counts it", async () => {
  const engine = await engineWith({ partitionWriteUnits: 1 });
  const pk = fresh('hot-partition');

  await put(engine, pk, 'a');
  const error = await failure(put(engine, pk, 'b'));
  await put(engine, fresh('cold-partition'), 'a');

  expect(error).toBeInstanceOf(ThrottlingException);
  expect((error as ThrottlingException).throttlingReasons).toEqual([
    { reason: 'TableWriteKeyRangeThroughputExceeded', resource: expect.stringMatching(/:table\/limits$/) },
  ]);
  expect(engine.proxy.stats().throttles).toMatchObject({
    total: 1,
    byOperation: { PutItem: 1 },
    byReason: { TableWriteKeyRangeThroughputExceeded: 1 },
  });
});

it("refuses a write over its item's budget while other items of the partition still write", async () => {
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

  expect((error as ThrottlingException).throttlingReasons).toEqual([
    {
      reason: 'IndexWriteKeyRangeThroughputExceeded',
      resource: expect.stringMatching(new RegExp(`/index/${TEST_INDEX}$`)),
    },
  ]);
});

it('cancels a transaction with ThrottlingError for the item over budget, and None for the others', async () => {
  // A transactional write of a small item costs 2 units: a budget of 2 admits one.
  const engine = await engineWith({ partitionWriteUnits: 2 });
  const hot = fresh('tx-hot');
  await engine.client.send(
    new TransactWriteItemsCommand({
      TransactItems: [{ Put: { TableName: TEST_TABLE, Item: { pk: { S: hot }, sk: { S: '1' } } } }],
    }),
  );

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
  expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
    'None',
    'ThrottlingError',
  ]);
});

it('returns the throttled requests of a BatchWriteItem in UnprocessedItems, and answers ThrottlingException when all are', async () => {
  const engine = await engineWith({ partitionWriteUnits: 1 });
  const pk = fresh('batch');
  const item = (sk: string) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: sk } } } });

  const partly = await engine.client.send(
    new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [item('1'), item('2')] } }),
  );
  const all = await failure(
    engine.client.send(new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [item('3')] } })),
  );

  expect(partly.UnprocessedItems).toEqual({ [TEST_TABLE]: [item('2')] });
  expect(all).toBeInstanceOf(ThrottlingException);
});

it("refuses a read over its partition's read budget", async () => {
  const engine = await engineWith({ partitionReadUnits: 1 });
  const key = { pk: { S: fresh('read') }, sk: { S: 'x' } };
  const read = () => engine.client.send(new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }));

  await read();
  const error = await failure(read());

  expect((error as ThrottlingException).throttlingReasons?.[0].reason).toBe('TableReadKeyRangeThroughputExceeded');
});

it('refuses any read of a partition-key value that took 1,000 write units within the second (reads and writes share its budget)', async () => {
  const engine = await engineWith(DEFAULT_BUDGETS);
  const pk = fresh('shared');
  // Four 250 KB items: 1,000 write units in one partition-key value, each on an item of its own.
  const quarter = (sk: string) => ({
    pk: { S: pk },
    sk: { S: sk },
    v: { S: 'x'.repeat(250 * 1024 - (2 + pk.length) - (2 + sk.length) - 1) },
  });
  for (const sk of ['a', 'b', 'c', 'd'])
    await engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: quarter(sk) }));

  const read = await failure(
    engine.client.send(new GetItemCommand({ TableName: TEST_TABLE, Key: { pk: { S: pk }, sk: { S: 'e' } } })),
  );
  const query = await failure(
    engine.client.send(
      new QueryCommand({
        TableName: TEST_TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
      }),
    ),
  );

  expect((read as ThrottlingException).throttlingReasons?.map((r) => r.reason)).toEqual([
    'TableReadKeyRangeThroughputExceeded',
  ]);
  expect(query).toBeInstanceOf(ThrottlingException);
  expect(engine.proxy.stats().operations.PutItem.writeUnits).toBe(1000);
});

describe("a write whose index partition is over its budget is refused whole, with the index's reason", () => {
  const INDEX_REASON = [
    {
      reason: 'IndexWriteKeyRangeThroughputExceeded',
      resource: expect.stringMatching(new RegExp(`/index/${TEST_INDEX}$`)),
    },
  ];
  const groupOf = async (engine: EngineUnderTest, pk: string) =>
    (
      await engine.client.send(
        new GetItemCommand({ TableName: TEST_TABLE, Key: { pk: { S: pk }, sk: { S: 'x' } }, ConsistentRead: true }),
      )
    ).Item?.group;
  const moveTo = (pk: string, group: string) => ({
    TableName: TEST_TABLE,
    Key: { pk: { S: pk }, sk: { S: 'x' } },
    UpdateExpression: 'SET #g = :g',
    ExpressionAttributeNames: { '#g': 'group' },
    ExpressionAttributeValues: { ':g': { S: group } },
  });

  /**
   * An engine whose index partitions take 1 write unit a second, an item in a cold group (written around it), and a hot
   * group that just took its unit.
   */
  async function hotGroup() {
    const engine = await engineWith({ indexPartitionWriteUnits: 1 });
    const [hot, mover, cold] = [fresh('hot-group'), fresh('mover'), fresh('cold-group')];
    await put(unlimited, mover, 'x', { group: { S: cold } });
    await put(engine, fresh('first'), 'x', { group: { S: hot } });
    return { engine, hot, mover, cold: { S: cold } };
  }

  it('an UpdateItem moving its item into the hot index partition: ThrottlingException, the item unchanged', async () => {
    const { engine, hot, mover, cold } = await hotGroup();

    const error = await failure(engine.client.send(new UpdateItemCommand(moveTo(mover, hot))));

    expect((error as ThrottlingException).throttlingReasons).toEqual(INDEX_REASON);
    expect((error as ThrottlingException).message).toMatch(/global secondary indexes/);
    expect(await groupOf(engine, mover)).toEqual(cold);
  });

  it('a TransactWriteItems with such an update: cancelled with ThrottlingError for it, nothing written', async () => {
    const { engine, hot, mover, cold } = await hotGroup();
    const other = fresh('other');

    const error = await failure(
      engine.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: TEST_TABLE, Item: { pk: { S: other }, sk: { S: 'x' } } } },
            { Update: moveTo(mover, hot) },
          ],
        }),
      ),
    );

    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'ThrottlingError', Message: expect.stringMatching(/global secondary indexes/) },
    ]);
    expect(await groupOf(engine, mover)).toEqual(cold);
    expect(
      (
        await engine.client.send(
          new GetItemCommand({ TableName: TEST_TABLE, Key: { pk: { S: other }, sk: { S: 'x' } } }),
        )
      ).Item,
    ).toBeUndefined();
  });

  it('a BatchWriteItem: the put into the hot index partition comes back unprocessed; all of them refused is a ThrottlingException naming the index', async () => {
    const { engine, hot } = await hotGroup();
    const into = (group: string) => ({
      PutRequest: { Item: { pk: { S: fresh('batch') }, sk: { S: 'x' }, group: { S: group } } },
    });
    const [hotPut, coldPut] = [into(hot), into(fresh('cold'))];

    const partly = await engine.client.send(
      new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [hotPut, coldPut] } }),
    );
    const all = await failure(
      engine.client.send(new BatchWriteItemCommand({ RequestItems: { [TEST_TABLE]: [into(hot)] } })),
    );

    expect(partly.UnprocessedItems).toEqual({ [TEST_TABLE]: [hotPut] });
    expect((all as ThrottlingException).throttlingReasons).toEqual(INDEX_REASON);
  });

  it('a DeleteItem of an item whose entry is in the hot index partition: refused, the item kept', async () => {
    const engine = await engineWith({ indexPartitionWriteUnits: 1 });
    const [hot, victim] = [fresh('hot-group'), fresh('victim')];
    await put(unlimited, victim, 'x', { group: { S: hot } });
    await put(engine, fresh('first'), 'x', { group: { S: hot } }); // the hot group's unit

    const error = await failure(
      engine.client.send(new DeleteItemCommand({ TableName: TEST_TABLE, Key: { pk: { S: victim }, sk: { S: 'x' } } })),
    );

    expect((error as ThrottlingException).throttlingReasons).toEqual(INDEX_REASON);
    expect(await groupOf(engine, victim)).toEqual({ S: hot });
  });
});
