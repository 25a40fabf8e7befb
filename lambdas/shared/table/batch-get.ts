import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../aws';
import type { Item } from './dynamo';
import type { Key } from './keys';

/** DynamoDB's BatchGetItem takes at most 100 keys. */
const BATCH_GET_MAX_KEYS = 100;

/** How many BatchGetItem calls a batch of keys gets before the read fails, unless a caller says fewer. */
const UNPROCESSED_ROUNDS = 8;

/**
 * The rows of `keys` that exist, in no particular order: one BatchGetItem per 100 keys, asking
 * again for the keys DynamoDB left unprocessed (throttling) with a growing pause. A caller whose
 * failure is itself retried (a queue's message) asks for fewer `rounds`, so it gives way sooner.
 */
export async function batchGetItems(
  keys: readonly Key[],
  options: { consistentRead?: boolean; rounds?: number } = {},
): Promise<Item[]> {
  const rounds = options.rounds ?? UNPROCESSED_ROUNDS;
  const found: Item[] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX_KEYS) {
    let batch: Record<string, unknown>[] | undefined = keys.slice(start, start + BATCH_GET_MAX_KEYS);
    for (let round = 0; batch && batch.length > 0; round += 1) {
      if (round >= rounds) throw new Error(`batchGetItems: ${batch.length} keys unprocessed after ${rounds} rounds`);
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
      const result: BatchGetCommandOutput = await dynamo.send(
        new BatchGetCommand({
          RequestItems: { [TABLE_NAME]: { Keys: batch, ConsistentRead: options.consistentRead } },
        }),
      );
      found.push(...(result.Responses?.[TABLE_NAME] ?? []));
      batch = result.UnprocessedKeys?.[TABLE_NAME]?.Keys;
    }
  }
  return found;
}

/**
 * `batchGetItems`, answered as a finder: the row of a key, undefined when it does not exist. BatchGetItem answers in no
 * particular order, so a caller that reads rows of several kinds at once finds each by its key, never by position.
 */
export async function batchGetByKey(
  keys: readonly Key[],
  options: { consistentRead?: boolean; rounds?: number } = {},
): Promise<(key: Key) => Item | undefined> {
  const rows = await batchGetItems(keys, options);
  return (key) => rows.find((row) => row.pk === key.pk && row.sk === key.sk);
}
