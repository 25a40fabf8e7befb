/**
 * Probe: does DynamoDB Local's time for `pk = :pk AND begins_with(sk, :prefix)` (Limit 51,
 * descending) grow with rows of OTHER sort-key prefixes in the same partition, while its
 * ScannedCount stays 51? And does the same condition written as a range,
 * `sk BETWEEN :prefix AND :successor` (what `sortKeyStartsWith` in lambdas/shared/table/keys.ts
 * writes), stay flat? Seeds 2,000 CONTACT# rows, measures, adds rows under MSG#, measures again,
 * then grows the contacts themselves to 100,000. Run: `npx tsx bench/probes/begins-with.ts`.
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
  const pk = 'T#probe';
  await put(Array.from({ length: 2000 }, (_, i) => ({ pk, sk: `CONTACT#${String(i).padStart(8, '0')}`, name: `Person ${i}`, pad: 'x'.repeat(300) })));
  const measure = async (label: string) => {
    for (const [form, condition, values] of [
      ['begins_with', 'pk = :pk AND begins_with(sk, :p)', { ':pk': pk, ':p': 'CONTACT#' }],
      ['BETWEEN', 'pk = :pk AND sk BETWEEN :lo AND :hi', { ':pk': pk, ':lo': 'CONTACT#', ':hi': 'CONTACT$' }],
    ] as const) {
      const times: number[] = [];
      let scanned = 0;
      for (let i = 0; i < 43; i++) {
        const t0 = performance.now();
        const r = await doc.send(new QueryCommand({ TableName: table, KeyConditionExpression: condition, ExpressionAttributeValues: values, ScanIndexForward: false, Limit: 51 }));
        if (i >= 3) times.push(performance.now() - t0);
        scanned = r.ScannedCount ?? 0;
      }
      times.sort((a, b) => a - b);
      console.log(`${label}, ${form}: ScannedCount ${scanned}, p50 ${times[20].toFixed(1)} ms`);
    }
  };
  await measure('2,000 contacts, nothing else in the partition');
  for (const extra of [20_000, 100_000]) {
    const have = extra === 20_000 ? 0 : 20_000;
    await put(Array.from({ length: extra - have }, (_, i) => ({ pk, sk: `MSG#${String(have + i).padStart(8, '0')}`, body: 'x'.repeat(300) })));
    await measure(`2,000 contacts and ${extra} MSG# rows in the partition`);
  }
  await put(Array.from({ length: 98_000 }, (_, i) => ({ pk, sk: `CONTACT#${String(2000 + i).padStart(8, '0')}`, name: `Person ${i}`, pad: 'x'.repeat(300) })));
  await measure('100,000 contacts and 100000 MSG# rows in the partition');
  client.destroy();
  await engine.stop();
}
main();
