import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { localEngineClientConfig } from '../../lambdas/shared/config';
import { databaseName } from '../../local/dynamodb-limits/engine';
import { RESET_PATH, STATS_PATH } from '../../local/dynamodb-limits/limits-proxy';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import {
  createLimitsTable,
  startEngineUnderTest,
  TEST_INDEX,
  TEST_TABLE,
  type EngineUnderTest,
} from '../support/limits-engine-table';

/**
 * Units as AWS charges them, end to end: what the engine answers in ConsumedCapacity and counts
 * in its meters (read over HTTP, as the bench reads them from another process), against the
 * documented examples, next to what DynamoDB Local alone reports for the same request.
 */
let engine: EngineUnderTest;
let local: DynamoDBClient;

beforeAll(async () => {
  engine = await startEngineUnderTest();
  local = new DynamoDBClient(localEngineClientConfig(process.env.DYNAMODB_LOCAL_ENDPOINT!));
  await createLimitsTable(engine.client);
});
afterAll(async () => {
  local.destroy();
  await engine.stop();
});
beforeEach(() => engine.proxy.reset());

type Item = Record<string, AttributeValue>;
const pad = (bytes: number): AttributeValue => ({ S: 'x'.repeat(bytes) });
const put = (item: Item) => engine.client.send(new PutItemCommand({ TableName: TEST_TABLE, Item: item }));
const stats = async (): Promise<LimitsStats> =>
  (await fetch(`${engine.proxy.endpoint}${STATS_PATH}`)).json() as Promise<LimitsStats>;

it('charges every key of a BatchGetItem, found or not: 50 keys of which 5 exist are 25 units, where DynamoDB Local says 2.5', async () => {
  const keys = Array.from({ length: 50 }, (_, n) => ({ pk: { S: 'batch' }, sk: { S: `k${n}` } }));
  await engine.client.send(
    new BatchWriteItemCommand({
      RequestItems: { [TEST_TABLE]: keys.slice(0, 5).map((key) => ({ PutRequest: { Item: key } })) },
    }),
  );
  const batchGet = new BatchGetItemCommand({
    RequestItems: { [TEST_TABLE]: { Keys: keys } },
    ReturnConsumedCapacity: 'TOTAL',
  });

  const charged = await engine.client.send(batchGet);
  const reported = await local.send(batchGet);

  expect(charged.ConsumedCapacity).toEqual([{ TableName: TEST_TABLE, CapacityUnits: 25, ReadCapacityUnits: 25 }]);
  expect(reported.ConsumedCapacity?.[0].CapacityUnits).toBe(2.5);
});

it('charges a transaction writing three 500-byte items 6 units, where DynamoDB Local says less', async () => {
  const items = (tag: string) =>
    ['a', 'b', 'c'].map((sk) => ({
      Put: { TableName: TEST_TABLE, Item: { pk: { S: `tx-${tag}` }, sk: { S: sk }, v: pad(480) } },
    }));

  const charged = await engine.client.send(
    new TransactWriteItemsCommand({ TransactItems: items('engine'), ReturnConsumedCapacity: 'TOTAL' }),
  );
  const reported = await local.send(
    new TransactWriteItemsCommand({ TransactItems: items('local'), ReturnConsumedCapacity: 'TOTAL' }),
  );

  expect(charged.ConsumedCapacity?.[0].CapacityUnits).toBe(6);
  expect(reported.ConsumedCapacity?.[0].CapacityUnits).toBeLessThan(6);
});

it('charges a query the items it examined, filtered out or not (10 items of 40.8 KB: 44 KB, 11 units), and an empty page 1 unit', async () => {
  for (let n = 0; n < 10; n += 1) await put({ pk: { S: 'query' }, sk: { S: `q${n}` }, v: pad(4178 - 12) }); // 4,178 bytes each: 41,780 in all
  const query = (pk: string) =>
    engine.client.send(
      new QueryCommand({
        TableName: TEST_TABLE,
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: 'attribute_exists(nothing)',
        ExpressionAttributeValues: { ':pk': { S: pk } },
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );

  const page = await query('query');
  const empty = await query('nobody');

  expect([page.Count, page.ConsumedCapacity?.CapacityUnits]).toEqual([0, 11]);
  expect(empty.ConsumedCapacity?.CapacityUnits).toBe(1);
});

it('charges each index an item change touches: moving an index key is a delete and a put there', async () => {
  const key = { pk: { S: 'indexed' }, sk: { S: 'one' } };
  const first = await engine.client.send(
    new PutItemCommand({
      TableName: TEST_TABLE,
      Item: { ...key, group: { S: 'A' }, v: pad(1500) },
      ReturnConsumedCapacity: 'INDEXES',
    }),
  );

  const moved = await engine.client.send(
    new UpdateItemCommand({
      TableName: TEST_TABLE,
      Key: key,
      UpdateExpression: 'SET #g = :b',
      ExpressionAttributeNames: { '#g': 'group' },
      ExpressionAttributeValues: { ':b': { S: 'B' } },
      ReturnConsumedCapacity: 'INDEXES',
    }),
  );

  expect(first.ConsumedCapacity).toMatchObject({
    CapacityUnits: 4,
    Table: { CapacityUnits: 2 },
    GlobalSecondaryIndexes: { [TEST_INDEX]: { CapacityUnits: 2 } },
  });
  expect(moved.ConsumedCapacity).toMatchObject({
    CapacityUnits: 6,
    Table: { CapacityUnits: 2 },
    GlobalSecondaryIndexes: { [TEST_INDEX]: { CapacityUnits: 4 } },
  });
  const { partitions } = await stats();
  expect(partitions[`${TEST_TABLE}/${TEST_INDEX} S:A`]).toEqual({ readUnits: 0, writeUnits: 4, reads: 0, writes: 2 });
  expect(partitions[`${TEST_TABLE}/${TEST_INDEX} S:B`]).toEqual({ readUnits: 0, writeUnits: 2, reads: 0, writes: 1 });
});

it('weighs an index entry 100 bytes more than its attributes, where DynamoDB Local does not: in its writes and in index queries', async () => {
  const near = (pk: string, bytes: number) => ({
    pk: { S: pk },
    sk: { S: 's' },
    group: { S: pk },
    v: pad(bytes - (2 + pk.length) - 3 - (5 + pk.length) - 1),
  });
  const putAndQuery = async (client: DynamoDBClient, pk: string, bytes: number) => {
    const written = await client.send(
      new PutItemCommand({ TableName: TEST_TABLE, Item: near(pk, bytes), ReturnConsumedCapacity: 'INDEXES' }),
    );
    const read = await client.send(
      new QueryCommand({
        TableName: TEST_TABLE,
        IndexName: TEST_INDEX,
        KeyConditionExpression: '#g = :g',
        ExpressionAttributeNames: { '#g': 'group' },
        ExpressionAttributeValues: { ':g': { S: pk } },
        ReturnConsumedCapacity: 'INDEXES',
      }),
    );
    return [
      written.ConsumedCapacity?.GlobalSecondaryIndexes?.[TEST_INDEX].CapacityUnits,
      read.ConsumedCapacity?.CapacityUnits,
    ];
  };

  // 950 bytes: 1 write unit as an item, 2 as an index entry (1,050); 4,000 bytes: 4 write units and one 4 KB read block
  // as an item, 5 and two as an entry.
  expect(await putAndQuery(engine.client, 'overhead-w', 950)).toEqual([2, 0.5]);
  expect(await putAndQuery(engine.client, 'overhead-r', 4000)).toEqual([5, 1]);
  expect(await putAndQuery(local, 'overhead-l', 4000)).toEqual([4, 0.5]);
  expect(await putAndQuery(local, 'overhead-m', 950)).toEqual([1, 0.5]);
});

it('charges a write the larger image, before or after, and answers only the attributes the caller asked for', async () => {
  const key = { pk: { S: 'images' }, sk: { S: 'one' } };
  await put({ ...key, v: pad(2000) });

  const shrunk = await engine.client.send(
    new PutItemCommand({ TableName: TEST_TABLE, Item: { ...key, v: pad(10) }, ReturnConsumedCapacity: 'TOTAL' }),
  );
  const again = await engine.client.send(
    new PutItemCommand({
      TableName: TEST_TABLE,
      Item: { ...key, v: pad(20) },
      ReturnValues: 'ALL_OLD',
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );
  const updated = await engine.client.send(
    new UpdateItemCommand({
      TableName: TEST_TABLE,
      Key: key,
      UpdateExpression: 'SET v = :v',
      ExpressionAttributeValues: { ':v': pad(3000) },
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );

  expect([shrunk.ConsumedCapacity?.CapacityUnits, shrunk.Attributes]).toEqual([2, undefined]);
  expect([again.ConsumedCapacity?.CapacityUnits, again.Attributes?.v]).toEqual([1, pad(10)]);
  expect([updated.ConsumedCapacity?.CapacityUnits, updated.Attributes]).toEqual([3, undefined]);
});

it('charges failed conditional writes (the 2 KB item there: 2 units; no item: 1) and a ConditionCheck as a transactional write', async () => {
  const key = { pk: { S: 'conditional' }, sk: { S: 'big' } };
  await put({ ...key, v: pad(2000) });
  engine.proxy.reset();

  await engine.client
    .send(
      new PutItemCommand({
        TableName: TEST_TABLE,
        Item: { ...key, v: pad(10) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    )
    .catch(() => {});
  await engine.client
    .send(
      new UpdateItemCommand({
        TableName: TEST_TABLE,
        Key: { ...key, sk: { S: 'missing' } },
        UpdateExpression: 'SET v = :v',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':v': pad(1) },
      }),
    )
    .catch(() => {});
  await engine.client.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { ConditionCheck: { TableName: TEST_TABLE, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
      ],
    }),
  );

  const { operations } = await stats();
  expect(operations.PutItem).toMatchObject({
    requests: 1,
    writeUnits: 2,
    errors: { ConditionalCheckFailedException: 1 },
  });
  expect(operations.UpdateItem).toMatchObject({
    requests: 1,
    writeUnits: 1,
    errors: { ConditionalCheckFailedException: 1 },
  });
  expect(operations.TransactWriteItems).toMatchObject({ writeUnits: 4 }); // the 2 KB item checked, doubled
});

it('charges a GetItem its whole item (3.5 KB strongly consistent: 1 unit) even when it projects one attribute', async () => {
  const key = { pk: { S: 'get' }, sk: { S: 'one' } };
  await put({ ...key, v: pad(3500) });
  const get = (projected: boolean) =>
    engine.client.send(
      new GetItemCommand({
        TableName: TEST_TABLE,
        Key: key,
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
        ...(projected && { ProjectionExpression: 'sk' }),
      }),
    );

  expect((await get(false)).ConsumedCapacity?.CapacityUnits).toBe(1);
  expect((await get(true)).ConsumedCapacity?.CapacityUnits).toBe(1);
});

it('serves its meters over HTTP, per item and partition, and per database, and clears them on POST /__limits/reset', async () => {
  await put({ pk: { S: 'metered' }, sk: { S: 'a' } });
  await engine.client.send(
    new GetItemCommand({ TableName: TEST_TABLE, Key: { pk: { S: 'metered' }, sk: { S: 'a' } } }),
  );
  const { region, credentials } = localEngineClientConfig(engine.proxy.endpoint);
  const ofDatabase = async (database: string): Promise<LimitsStats> =>
    (
      await fetch(`${engine.proxy.endpoint}${STATS_PATH}?database=${encodeURIComponent(database)}`)
    ).json() as Promise<LimitsStats>;

  const before = await stats();
  const mine = await ofDatabase(databaseName(credentials.accessKeyId, region));
  const another = await ofDatabase(databaseName('someone-else', region));
  await fetch(`${engine.proxy.endpoint}${RESET_PATH}`, { method: 'POST' });
  const after = await stats();

  expect(before.items[`${TEST_TABLE} S:metered S:a`]).toEqual({ readUnits: 0.5, writeUnits: 1, reads: 1, writes: 1 });
  expect(before.recentRequests.map((r) => r.operation)).toEqual(['PutItem', 'GetItem']);
  expect(mine.items).toEqual(before.items);
  expect(another).toMatchObject({ operations: {}, items: {}, conflicts: { total: 0 }, throttles: { total: 0 } });
  expect(after).toMatchObject({ operations: {}, items: {}, partitions: {}, recentRequests: [] });
});

it('passes control-plane and unknown requests through untouched', async () => {
  const { TableNames } = await engine.client.send(new ListTablesCommand({}));
  const unknown = await fetch(engine.proxy.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.NoSuchThing',
      authorization:
        'AWS4-HMAC-SHA256 Credential=x/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: '{}',
  });

  expect(TableNames).toContain(TEST_TABLE);
  expect(await unknown.json()).toMatchObject({ __type: expect.stringContaining('UnknownOperationException') });
});
