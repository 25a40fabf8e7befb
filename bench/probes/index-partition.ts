/**
 * Probe: does DynamoDB Local's time for a Query that names only an index partition key (the
 * conversation: `gsi1pk = :pk`, Limit 51, descending) grow with the rows of that partition? Grows
 * one `gsi1` partition to 100, 1,000 and 10,000 rows (the bench's conversation sizes) and measures
 * the key alone and the key with a sort-key range. Run: `npx tsx bench/probes/index-partition.ts`.
 */
import { startDynamoDbLocal, localDynamoClient } from '../../local/dynamodb-local';
import { ensureTable } from '../../local/create-table';
import { DynamoDBDocumentClient, BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';

async function main() {
  const engine = await startDynamoDbLocal();
  const client = localDynamoClient(engine.endpoint);
  const doc = DynamoDBDocumentClient.from(client);
  const table = 'probe';
  await ensureTable(client, table);
  const put = async (items: Record<string, unknown>[]) => {
    for (let i = 0; i < items.length; i += 25 * 8) {
      await Promise.all(Array.from({ length: 8 }, (_, b) => items.slice(i + b * 25, i + b * 25 + 25)).filter((x) => x.length).map(async (batch) => {
        let reqs = batch.map((Item) => ({ PutRequest: { Item } }));
        while (reqs.length) { const r = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: reqs } })); reqs = (r.UnprocessedItems?.[table] ?? []) as typeof reqs; }
      }));
    }
  };
  const gpk = 'T#probe#CONVERSATION#+1415';
  let have = 0;
  for (const size of [100, 1000, 10000]) {
    await put(Array.from({ length: size - have }, (_, i) => ({ pk: 'T#probe', sk: `MSG#${String(have + i).padStart(8, '0')}`, gsi1pk: gpk, gsi1sk: `MSG#${String(have + i).padStart(8, '0')}`, body: 'x'.repeat(300) })));
    have = size;
    for (const [form, cond, vals] of [['pk only', 'gsi1pk = :pk', { ':pk': gpk }], ['pk + range', 'gsi1pk = :pk AND gsi1sk BETWEEN :a AND :b', { ':pk': gpk, ':a': 'MSG#', ':b': 'MSG$' }]] as const) {
      const times: number[] = [];
      for (let i = 0; i < 63; i++) {
        const t0 = performance.now();
        await doc.send(new QueryCommand({ TableName: table, IndexName: 'gsi1', KeyConditionExpression: cond, ExpressionAttributeValues: vals, ScanIndexForward: false, Limit: 51 }));
        if (i >= 3) times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(`${size} in the index partition, ${form}: p50 ${times[30].toFixed(1)} ms`);
    }
  }
  client.destroy();
  await engine.stop();
}
main();
