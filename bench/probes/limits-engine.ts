/**
 * Probe: the limits engine (local/dynamodb-limits/, docs/local-engine.md) against DynamoDB Local
 * alone, on one fresh DynamoDB Local:
 * 1. the measurement: 200 concurrent TransactWriteItems on one item, 16 at a time;
 *    DynamoDB Local alone cancels none, the engine (25 ms hold) most;
 * 2. what the engine adds to a request: the p50 of GetItem, PutItem, UpdateItem, Query and a
 *    one-item TransactWriteItems run one at a time, direct and through the engine with a hold of 0
 *    (so the figure is the engine's own work: its reads before and after, its bookkeeping, the
 *    extra HTTP hop).
 * Run: `npx tsx bench/probes/limits-engine.ts`.
 */
import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../local/create-table';
import { localDynamoClient, startDynamoDbLocal } from '../../local/dynamodb-local';
import { startLimitsProxy } from '../../local/dynamodb-limits/limits-proxy';
import { localEngineClientConfig } from '../../lambdas/shared/config';

const TABLE = 'probe';
const RUNS = 200;

const increment = (pk: string) => ({
  TableName: TABLE,
  Key: { pk: { S: pk }, sk: { S: 'counter' } },
  UpdateExpression: 'ADD n :one',
  ExpressionAttributeValues: { ':one': { N: '1' } },
});

/** 200 one-item transactions on one item, 16 in flight at a time. */
async function hotItemTransactions(
  client: DynamoDBClient,
): Promise<{ committed: number; cancelled: number; ms: number }> {
  let started = 0;
  let committed = 0;
  let cancelled = 0;
  const begin = performance.now();
  const worker = async () => {
    while (started < RUNS) {
      started += 1;
      try {
        await client.send(new TransactWriteItemsCommand({ TransactItems: [{ Update: increment('hot') }] }));
        committed += 1;
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
        cancelled += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { committed, cancelled, ms: Math.round(performance.now() - begin) };
}

/**
 * The p50 of each operation, one request at a time after a warm-up, direct and through the
 * engine in turn (so both meet the same JIT and machine state).
 */
async function latencies(direct: DynamoDBClient, proxied: DynamoDBClient): Promise<Record<string, [number, number]>> {
  const operations: Record<string, (client: DynamoDBClient, n: number) => Promise<unknown>> = {
    GetItem: (client) =>
      client.send(
        new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'lat' }, sk: { S: 'item' } }, ConsistentRead: true }),
      ),
    PutItem: (client, n) =>
      client.send(
        new PutItemCommand({
          TableName: TABLE,
          Item: { pk: { S: 'lat' }, sk: { S: `put${n % 20}` }, v: { S: 'x'.repeat(200) } },
        }),
      ),
    UpdateItem: (client) => client.send(new UpdateItemCommand(increment('lat'))),
    Query: (client) =>
      client.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: 'lat' } },
          Limit: 20,
        }),
      ),
    TransactWriteItems: (client) =>
      client.send(new TransactWriteItemsCommand({ TransactItems: [{ Update: increment('lat-tx') }] })),
  };
  const p50 = (times: number[]) => Number(times.sort((a, b) => a - b)[Math.floor(times.length / 2)].toFixed(2));
  const result: Record<string, [number, number]> = {};
  for (const [name, run] of Object.entries(operations)) {
    const times: [number[], number[]] = [[], []];
    for (let n = 0; n < 220; n += 1) {
      const side = n % 2;
      const begin = performance.now();
      await run(side === 0 ? direct : proxied, n);
      if (n >= 20) times[side].push(performance.now() - begin);
    }
    result[name] = [p50(times[0]), p50(times[1])];
  }
  return result;
}

async function main() {
  const engine = await startDynamoDbLocal();
  const setup = localDynamoClient(engine.endpoint);
  await ensureTable(setup, TABLE);
  setup.destroy();
  const direct = new DynamoDBClient({ ...localEngineClientConfig(engine.endpoint), maxAttempts: 1 });
  const limits = await startLimitsProxy({ upstream: engine.endpoint });
  const proxied = new DynamoDBClient({ ...localEngineClientConfig(limits.endpoint), maxAttempts: 1 });
  const noHold = await startLimitsProxy({ upstream: engine.endpoint, transactionHoldMs: 0 });
  const noHoldClient = new DynamoDBClient({ ...localEngineClientConfig(noHold.endpoint), maxAttempts: 1 });
  try {
    console.log('200 TransactWriteItems on one item, 16 at a time:');
    console.log('  DynamoDB Local alone:', await hotItemTransactions(direct));
    console.log(`  limits engine, ${limits.settings.transactionHoldMs} ms hold:`, await hotItemTransactions(proxied));
    console.log('p50 ms, one request at a time (engine with a 0 ms hold):');
    for (const [name, [alone, through]] of Object.entries(await latencies(direct, noHoldClient))) {
      console.log(`  ${name}: ${alone} direct, ${through} through the engine (+${(through - alone).toFixed(2)})`);
    }
  } finally {
    for (const client of [direct, proxied, noHoldClient]) client.destroy();
    await limits.stop();
    await noHold.stop();
    await engine.stop();
  }
}

void main();
