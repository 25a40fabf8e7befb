import {
  BatchWriteItemCommand,
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  TransactionCanceledException,
  TransactionConflictException,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import {
  createLimitsTable,
  startEngineUnderTest,
  TEST_TABLE,
  type EngineUnderTest,
} from '../support/limits-engine-table';

/**
 * DynamoDB's transaction conflict rules (Developer Guide, "Transaction conflict handling"), as the
 * limits engine enforces them over HTTP, seen through the real AWS SDK v3 client. A long hold
 * (300 ms) leaves room to act while a transaction holds its items; each test waits until the
 * engine reports the items held before it acts.
 */
const HOLD_MS = 300;
let engine: EngineUnderTest;

beforeAll(async () => {
  engine = await startEngineUnderTest({ transactionHoldMs: HOLD_MS });
  await createLimitsTable(engine.client);
});
afterAll(() => engine.stop());

let serial = 0;
const freshKey = () => ({ pk: { S: `conflict-${(serial += 1)}` }, sk: { S: 'item' } });

const setValue = (key: Record<string, { S: string }>, value: string): TransactWriteItem => ({
  Update: {
    TableName: TEST_TABLE,
    Key: key,
    UpdateExpression: 'SET v = :v',
    ExpressionAttributeValues: { ':v': { S: value } },
  },
});

/**
 * Starts `request` and resolves once the engine holds `items` items for it (the request itself is returned unawaited).
 */
async function whileHolding(request: Promise<unknown>, items: number): Promise<{ done: Promise<unknown> }> {
  request.catch(() => {});
  const deadline = Date.now() + 5_000;
  while (engine.proxy.heldItems() < items) {
    if (Date.now() > deadline) throw new Error('the request never held its items');
    await new Promise((r) => setTimeout(r, 2));
  }
  return { done: request };
}

/** A transaction under way, holding its items. */
const holding = (items: TransactWriteItem[]) =>
  whileHolding(engine.client.send(new TransactWriteItemsCommand({ TransactItems: items })), items.length);

describe('a transaction holding an item', () => {
  it('cancels another transaction on it: TransactionConflict for that item, None for the others', async () => {
    const [hot, other] = [freshKey(), freshKey()];
    const first = await holding([setValue(hot, 'first')]);

    const second = engine.client.send(
      new TransactWriteItemsCommand({ TransactItems: [setValue(other, 'x'), setValue(hot, 'second')] }),
    );

    const error = await second.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item.' },
    ]);
    await first.done;
    expect(engine.proxy.stats().conflicts.byOperation).toMatchObject({ TransactWriteItems: expect.any(Number) });
  });

  it('refuses a standard write of it with TransactionConflictException, and lets it through once released', async () => {
    const key = freshKey();
    const first = await holding([setValue(key, 'committed')]);

    const during = await engine.client
      .send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: { S: 'plain' } } }))
      .catch((err: unknown) => err);
    await first.done;
    await engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: { S: 'after' } } }));

    expect(during).toBeInstanceOf(TransactionConflictException);
    const { Item } = await engine.client.send(
      new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }),
    );
    expect(Item?.v).toEqual({ S: 'after' });
  });

  it('lets a GetItem read the committed value during the hold, and the new value after', async () => {
    const key = freshKey();
    await engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: { S: 'old' } } }));
    const first = await holding([setValue(key, 'new')]);

    const during = await engine.client.send(
      new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }),
    );
    await first.done;
    const after = await engine.client.send(
      new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }),
    );

    expect(during.Item?.v).toEqual({ S: 'old' });
    expect(after.Item?.v).toEqual({ S: 'new' });
  });

  it('cancels a TransactGetItems on it, and serves it once released', async () => {
    const [key, other] = [freshKey(), freshKey()];
    const first = await holding([setValue(key, 'v1')]);
    const read = () =>
      engine.client.send(
        new TransactGetItemsCommand({
          TransactItems: [{ Get: { TableName: TEST_TABLE, Key: other } }, { Get: { TableName: TEST_TABLE, Key: key } }],
        }),
      );

    const during = await read().catch((err: unknown) => err);
    await first.done;
    const after = await read();

    expect((during as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'None',
      'TransactionConflict',
    ]);
    expect(after.Responses?.[1].Item?.v).toEqual({ S: 'v1' });
  });

  it("leaves it unprocessed in a BatchWriteItem and writes the batch's other items", async () => {
    const [held, free] = [freshKey(), freshKey()];
    const first = await holding([setValue(held, 'tx')]);

    const batch = await engine.client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [TEST_TABLE]: [
            { PutRequest: { Item: { ...held, v: { S: 'batch' } } } },
            { PutRequest: { Item: { ...free, v: { S: 'batch' } } } },
          ],
        },
      }),
    );
    await first.done;

    expect(batch.UnprocessedItems).toEqual({
      [TEST_TABLE]: [{ PutRequest: { Item: { ...held, v: { S: 'batch' } } } }],
    });
    const { Item } = await engine.client.send(
      new GetItemCommand({ TableName: TEST_TABLE, Key: free, ConsistentRead: true }),
    );
    expect(Item?.v).toEqual({ S: 'batch' });
  });
});

describe('a TransactGetItems reading an item', () => {
  const setItem = (key: Record<string, { S: string }>, value: string) =>
    engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: { S: value } } }));

  const transactGet = (keys: Record<string, { S: string }>[]) =>
    engine.client.send(
      new TransactGetItemsCommand({ TransactItems: keys.map((Key) => ({ Get: { TableName: TEST_TABLE, Key } })) }),
    );

  /** A TransactGetItems under way, holding its items for its window. */
  const reading = (keys: Record<string, { S: string }>[]) => whileHolding(transactGet(keys), keys.length);

  it('is cancelled by a write that arrives while it reads: TransactionConflict for that item, and the write goes through', async () => {
    const [key, other] = [freshKey(), freshKey()];
    await setItem(key, 'before');
    const conflictsBefore = engine.proxy.stats().conflicts.byOperation.TransactGetItems ?? 0;
    const read = await reading([other, key]);

    await setItem(key, 'during');
    const error = await read.done.catch((err: unknown) => err);

    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item.' },
    ]);
    expect(
      (await engine.client.send(new GetItemCommand({ TableName: TEST_TABLE, Key: key, ConsistentRead: true }))).Item?.v,
    ).toEqual({ S: 'during' });
    expect(engine.proxy.stats().conflicts.byOperation.TransactGetItems).toBe(conflictsBefore + 1);
  });

  it('is cancelled by a transaction that writes one of its items meanwhile, which commits', async () => {
    const key = freshKey();
    const read = await reading([key]);

    await engine.client.send(new TransactWriteItemsCommand({ TransactItems: [setValue(key, 'tx')] }));

    expect(await read.done.catch((err: unknown) => err)).toBeInstanceOf(TransactionCanceledException);
  });

  it('is served when nothing writes its items meanwhile, however many read them', async () => {
    const key = freshKey();
    await setItem(key, 'kept');

    const reads = await Promise.all([transactGet([key]), transactGet([key])]);

    expect(reads.map((read) => read.Responses?.[0].Item?.v)).toEqual([{ S: 'kept' }, { S: 'kept' }]);
  });
});

it('serializes standard writes of one item instead of refusing them', async () => {
  const key = freshKey();

  const writes = await Promise.allSettled(
    Array.from({ length: 8 }, (_, n) =>
      engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: { S: `w${n}` } } })),
    ),
  );

  expect(writes.every((w) => w.status === 'fulfilled')).toBe(true);
});
