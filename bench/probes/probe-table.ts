/**
 * What every probe needs: a table on a fresh DynamoDB Local (the same engine and table schema as
 * the local runtime), a batch loader, and the p50 of a Query repeated one at a time.
 */
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '../../local/create-table';
import { localDynamoClient, startDynamoDbLocal } from '../../local/dynamodb-local';

const TABLE = 'probe';
/** BatchWriteItem's limit, and how many batches are in flight at once. */
const BATCH = 25;
const BATCHES_AT_ONCE = 8;

export type ProbeTable = {
  put: (items: Record<string, unknown>[]) => Promise<void>;
  /** The query's p50 over 40 runs after 3 warm-up runs, and the ScannedCount of the last. */
  measure: (query: Omit<QueryCommandInput, 'TableName'>) => Promise<{ p50Ms: number; scanned: number }>;
  close: () => Promise<void>;
};

export async function openProbeTable(): Promise<ProbeTable> {
  const engine = await startDynamoDbLocal();
  const client = localDynamoClient(engine.endpoint);
  const doc = DynamoDBDocumentClient.from(client);
  await ensureTable(client, TABLE);

  const writeBatch = async (batch: Record<string, unknown>[]) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const result = await doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: requests } }));
      requests = (result.UnprocessedItems?.[TABLE] ?? []) as typeof requests;
    }
  };
  const put = async (items: Record<string, unknown>[]) => {
    for (let i = 0; i < items.length; i += BATCH * BATCHES_AT_ONCE) {
      const round = Array.from({ length: BATCHES_AT_ONCE }, (_, b) => items.slice(i + b * BATCH, i + (b + 1) * BATCH));
      await Promise.all(round.filter((batch) => batch.length > 0).map(writeBatch));
    }
  };
  const measure = async (query: Omit<QueryCommandInput, 'TableName'>) => {
    const times: number[] = [];
    let scanned = 0;
    for (let run = 0; run < 43; run += 1) {
      const started = performance.now();
      const result = await doc.send(new QueryCommand({ ...query, TableName: TABLE }));
      if (run >= 3) times.push(performance.now() - started);
      scanned = result.ScannedCount ?? 0;
    }
    times.sort((a, b) => a - b);
    return { p50Ms: Number(times[20].toFixed(1)), scanned };
  };
  const close = async () => {
    client.destroy();
    await engine.stop();
  };
  return { put, measure, close };
}
