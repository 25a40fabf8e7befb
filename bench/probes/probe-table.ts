/**
 * What every probe needs: a table on a fresh DynamoDB Local (the same engine and table schema as
 * the local runtime), a batch loader, and the p50 of a Query repeated one at a time.
 */
import { DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchPutItems } from '../../lambdas/shared/table/batch-write';
import { ensureTable } from '../../local/create-table';
import { localDynamoClient, startDynamoDbLocal } from '../../local/dynamodb-local';

const TABLE = 'probe';
/** How many batches are in flight at once. */
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

  const put = (items: Record<string, unknown>[]) => batchPutItems(doc, TABLE, items, BATCHES_AT_ONCE);
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
