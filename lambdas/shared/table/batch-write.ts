import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from './dynamo';

/** DynamoDB's BatchWriteItem takes at most 25 requests. */
const BATCH_WRITE_MAX_ITEMS = 25;
/** Rounds of asking again for what DynamoDB left unprocessed before giving up. */
const MAX_ROUNDS = 10;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Puts `items` 25 to a call, `concurrency` calls at a time, for bulk loads (the scale bench and its
 * tests; never a request path: there are no conditions). DynamoDB answers a throttled part of a
 * batch by leaving it in `UnprocessedItems`, not with an error, so that part is sent again after a
 * growing, jittered pause (50 ms doubling to 2 s), at most `MAX_ROUNDS` times, then this throws
 * rather than spin. The client and table are the caller's, so a probe's own engine can use it.
 */
export async function batchPutItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Item[],
  concurrency = 8,
): Promise<void> {
  const batches = Array.from({ length: Math.ceil(items.length / BATCH_WRITE_MAX_ITEMS) }, (_, i) =>
    items.slice(i * BATCH_WRITE_MAX_ITEMS, (i + 1) * BATCH_WRITE_MAX_ITEMS),
  );
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let requests = batches[next++].map((Item) => ({ PutRequest: { Item } }));
      for (let round = 0; requests.length > 0; round += 1) {
        if (round >= MAX_ROUNDS)
          throw new Error(`batchPutItems: ${requests.length} items stayed unprocessed after ${MAX_ROUNDS} rounds`);
        if (round > 0) await pause(Math.min(2_000, 50 * 2 ** (round - 1)) * (0.5 + Math.random() / 2));
        const { UnprocessedItems } = await client.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
}
