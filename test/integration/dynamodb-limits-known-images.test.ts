import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { localEngineClientConfig } from '../../lambdas/shared/config';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import {
  createLimitsTable,
  startEngineUnderTest,
  TEST_TABLE,
  type EngineUnderTest,
} from '../support/limits-engine-table';

/**
 * The reads the engine saves before writes (local/dynamodb-limits/images-before.ts) change no figure: the same writes
 * charged by an engine that reads every item first and by one told it is the sole writer, which sizes them from the
 * images it left, come to the same units, item by item and partition by partition, with fewer reads.
 */
let reading: EngineUnderTest;
let soleWriter: EngineUnderTest;
let fromEmpty: EngineUnderTest;
let local: DynamoDBClient;

beforeAll(async () => {
  [reading, soleWriter, fromEmpty] = await Promise.all([
    startEngineUnderTest(),
    startEngineUnderTest({ soleWriter: true }),
    startEngineUnderTest({ soleWriter: true, startedEmpty: true }),
  ]);
  local = new DynamoDBClient(localEngineClientConfig(process.env.DYNAMODB_LOCAL_ENDPOINT!));
  await createLimitsTable(reading.client);
});
afterAll(async () => {
  local.destroy();
  await Promise.all([reading.stop(), soleWriter.stop(), fromEmpty.stop()]);
});
beforeEach(() => {
  for (const engine of [reading, soleWriter, fromEmpty]) engine.proxy.reset();
});

type Item = Record<string, AttributeValue>;
const NEW_ROW = { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } };
const pad = (bytes: number): AttributeValue => ({ S: 'x'.repeat(bytes) });

/** Sends a write and keeps the refusals a sequence expects (a failed condition, a cancelled transaction). */
async function refusedOrDone(send: Promise<unknown>): Promise<string> {
  return send.then(
    () => 'done',
    (err: Error) => err.name,
  );
}

/**
 * Every kind of write the engine sizes, on items of its own (`tag` starts every key and index value): unconditional
 * and new-row puts, updates that grow an item and move it in the index, a put refused because its row exists, a
 * transaction committed and one cancelled, a batch, deletes and a row created again.
 */
async function writeSequence(client: DynamoDBClient, tag: string): Promise<string[]> {
  const key = (name: string): Item => ({ pk: { S: `${tag}-${name}` }, sk: { S: 'row' } });
  const group = (name: string): AttributeValue => ({ S: `${tag}-${name}` });
  // The update both transactions make, one committed and one cancelled.
  const addOneToA = {
    Update: {
      TableName: TEST_TABLE,
      Key: key('a'),
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': { N: '1' } },
    },
  };
  return [
    await refusedOrDone(
      client.send(
        new PutItemCommand({
          TableName: TEST_TABLE,
          Item: { ...key('a'), group: group('g1'), v: pad(300), tags: { SS: ['zeta', 'alpha', 'mid'] } },
        }),
      ),
    ),
    // Leaves the index entry as it was: the engine that knows the put's item must compare its set in any order.
    await refusedOrDone(
      client.send(
        new UpdateItemCommand({
          TableName: TEST_TABLE,
          Key: key('a'),
          UpdateExpression: 'SET v = :v',
          ExpressionAttributeValues: { ':v': pad(300) },
        }),
      ),
    ),
    await refusedOrDone(
      client.send(
        new UpdateItemCommand({
          TableName: TEST_TABLE,
          Key: key('a'),
          UpdateExpression: 'SET v = :v, #g = :g',
          ExpressionAttributeNames: { '#g': 'group' },
          ExpressionAttributeValues: { ':v': pad(1500), ':g': group('g2') },
        }),
      ),
    ),
    await refusedOrDone(
      client.send(
        new UpdateItemCommand({
          TableName: TEST_TABLE,
          Key: key('a'),
          UpdateExpression: 'SET more = :t',
          ExpressionAttributeValues: { ':t': { NS: ['30', '1', '200'] } },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    ),
    await refusedOrDone(
      client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key('b'), v: pad(2500) }, ...NEW_ROW })),
    ),
    await refusedOrDone(
      client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key('b'), v: pad(10) }, ...NEW_ROW })),
    ),
    await refusedOrDone(
      client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            addOneToA,
            { Put: { TableName: TEST_TABLE, Item: { ...key('c'), group: group('g1'), v: pad(700) }, ...NEW_ROW } },
            { ConditionCheck: { TableName: TEST_TABLE, Key: key('b'), ConditionExpression: 'attribute_exists(pk)' } },
          ],
        }),
      ),
    ),
    await refusedOrDone(
      client.send(
        new TransactWriteItemsCommand({
          TransactItems: [addOneToA, { Put: { TableName: TEST_TABLE, Item: { ...key('c'), v: pad(5) }, ...NEW_ROW } }],
        }),
      ),
    ),
    await refusedOrDone(
      client.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [TEST_TABLE]: [
              { PutRequest: { Item: { ...key('d'), group: group('g2'), v: pad(1200) } } },
              { DeleteRequest: { Key: key('b') } },
            ],
          },
        }),
      ),
    ),
    await refusedOrDone(client.send(new DeleteItemCommand({ TableName: TEST_TABLE, Key: key('a') }))),
    await refusedOrDone(
      client.send(
        new UpdateItemCommand({
          TableName: TEST_TABLE,
          Key: key('a'),
          UpdateExpression: 'SET v = :v',
          ExpressionAttributeValues: { ':v': pad(100) },
          ...NEW_ROW,
        }),
      ),
    ),
    await refusedOrDone(
      client.send(
        new UpdateItemCommand({
          TableName: TEST_TABLE,
          Key: key('c'),
          UpdateExpression: 'SET v = :v',
          ConditionExpression: 'attribute_not_exists(v)',
          ExpressionAttributeValues: { ':v': pad(100) },
        }),
      ),
    ),
  ];
}

/** The meters with the sequence's tag taken out of every key, so two sequences' figures compare. */
function untagged(stats: LimitsStats, tag: string) {
  const rename = (meters: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(meters).map(([name, meter]) => [name.split(tag).join('<tag>'), meter]));
  return {
    operations: stats.operations,
    tables: stats.tables,
    partitions: rename(stats.partitions),
    items: rename(stats.items),
  };
}

it('charges every write as the engine that reads first does, reading only the items it never wrote', async () => {
  const readingOutcomes = await writeSequence(reading.client, 'read');
  const soleWriterOutcomes = await writeSequence(soleWriter.client, 'sole');

  const [readingStats, soleWriterStats] = [reading.proxy.stats(), soleWriter.proxy.stats()];
  expect(soleWriterOutcomes).toEqual(readingOutcomes);
  expect(readingOutcomes).toEqual([
    'done',
    'done',
    'done',
    'done',
    'done',
    'ConditionalCheckFailedException',
    'done',
    'TransactionCanceledException',
    'done',
    'done',
    'done',
    'ConditionalCheckFailedException',
  ]);
  expect(untagged(soleWriterStats, 'sole')).toEqual(untagged(readingStats, 'read'));
  // Read: the first put's item and the batch's new one, never written by this engine before. Taken as new: b's first
  // put and c's committed one; the rest it knew, a's creation again included (known absent). The engine that reads
  // first takes every new-row write as new (b twice, c twice, a again) and reads the other eleven items.
  expect(soleWriterStats.imagesBeforeWrites).toEqual({ read: 2, known: 12, guessedNew: 2 });
  expect(readingStats.imagesBeforeWrites).toEqual({ read: 11, known: 0, guessedNew: 5 });
  // The committed transaction's update of a (ADD n): its image after computed, not read back (and, as in every engine
  // of the suite, read back all the same and checked).
  expect(soleWriterStats.imagesAfterUpdates).toEqual({ computed: 1, read: 0 });
  expect(readingStats.imagesAfterUpdates).toEqual({ computed: 1, read: 0 });
});

it('reads nothing before a write when it saw every write since the table was empty, and charges the same', async () => {
  const readingOutcomes = await writeSequence(reading.client, 'again');
  const fromEmptyOutcomes = await writeSequence(fromEmpty.client, 'empty');

  expect(fromEmptyOutcomes).toEqual(readingOutcomes);
  expect(untagged(fromEmpty.proxy.stats(), 'empty')).toEqual(untagged(reading.proxy.stats(), 'again'));
  // Its own items are the only ones under its tag, and it wrote every one of them: all 16 known, absent ones included.
  expect(fromEmpty.proxy.stats().imagesBeforeWrites).toEqual({ read: 0, known: 16, guessedNew: 0 });
});

it('takes a new row as new without reading it, and charges a refused one on the item it found', async () => {
  const key = { pk: { S: 'guess-b' }, sk: { S: 'row' } };
  await local.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(2500) } }));

  const created = await refusedOrDone(
    reading.client.send(
      new PutItemCommand({ TableName: TEST_TABLE, Item: { pk: { S: 'guess-a' }, sk: { S: 'row' } }, ...NEW_ROW }),
    ),
  );
  const refused = await refusedOrDone(
    reading.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(1) }, ...NEW_ROW })),
  );

  expect([created, refused]).toEqual(['done', 'ConditionalCheckFailedException']);
  expect(reading.proxy.stats().imagesBeforeWrites).toEqual({ read: 0, known: 0, guessedNew: 2 });
  // The refused put is charged on the 2.5 KB item it found (3 units), not on a guess of no item (1 unit).
  expect(reading.proxy.stats().items['limits S:guess-b S:row']).toMatchObject({ writeUnits: 3, writes: 1 });
});

it('reads an item again unless it is the sole writer, so a write past the engine is charged as it stands', async () => {
  const key = { pk: { S: 'past-engine' }, sk: { S: 'row' } };
  await reading.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(10) } }));
  await local.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(3500) } }));
  reading.proxy.reset();

  await reading.client.send(
    new UpdateItemCommand({
      TableName: TEST_TABLE,
      Key: key,
      UpdateExpression: 'SET n = :n',
      ExpressionAttributeValues: { ':n': { N: '1' } },
    }),
  );

  // 3.5 KB before and after: 4 units, from the item read before the write, not the 10-byte one the engine wrote.
  expect(reading.proxy.stats().items['limits S:past-engine S:row']).toMatchObject({ writeUnits: 4 });
});

it('knows a table deleted and created again holds nothing, where its last write left a large item', async () => {
  const TableName = 'limits-recreated';
  const create = new CreateTableCommand({
    TableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  });
  await fromEmpty.client.send(create);
  await fromEmpty.client.send(new PutItemCommand({ TableName, Item: { pk: { S: 'x' }, v: pad(3500) } }));
  await fromEmpty.client.send(new DeleteTableCommand({ TableName }));
  await fromEmpty.client.send(create);

  const written = await fromEmpty.client.send(
    new UpdateItemCommand({
      TableName,
      Key: { pk: { S: 'x' } },
      UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': pad(10) },
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );

  // An update, which the engine sizes on the image before it: no item (1 unit), not the 3.5 KB one the engine wrote
  // before the table went (4 units).
  expect(written.ConsumedCapacity?.CapacityUnits).toBe(1);
  await fromEmpty.client.send(new DeleteTableCommand({ TableName }));
});

it('fails a transaction loudly when its computed image differs from the item written past a sole writer', async () => {
  const key = { pk: { S: 'checked' }, sk: { S: 'row' } };
  await soleWriter.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(10) } }));
  await local.send(new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(10), extra: pad(10) } }));

  const outcome = await refusedOrDone(
    soleWriter.client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: TEST_TABLE,
              Key: key,
              UpdateExpression: 'SET n = :n',
              ExpressionAttributeValues: { ':n': { N: '1' } },
            },
          },
        ],
      }),
    ),
  );

  expect(outcome).toBe('InternalServerError');
});
