import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { GSIS } from '../../shared/table/table-schema';
import { DUE_SHARDS, duePk } from './due-list';

/**
 * The time of the first text on the due list, due or not, or undefined when it is empty: the first entry of each
 * shard (its oldest: the sort key starts with the text's `sendAt`), one Query of one entry per shard, all at once.
 * The firing's run waits for it when it falls within the run (lambdas/handlers/scheduled/firing-run.ts), so a quiet
 * minute costs these 32 reads of half a unit and nothing else. Eventually consistent, like the index: a text
 * scheduled a moment ago may be seen by the next look, always before its time (it is at least a minute ahead).
 */
export async function nextDueAt(): Promise<Date | undefined> {
  const firsts = await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: TABLE_NAME,
          IndexName: GSIS.gsi2.indexName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, '#sk': GSIS.gsi2.sortKey },
          ExpressionAttributeValues: { ':pk': duePk(shard) },
          ProjectionExpression: '#sk',
          Limit: 1,
        }),
      );
      const sortKey = page.Items?.[0]?.[GSIS.gsi2.sortKey];
      return typeof sortKey === 'string' ? Date.parse(sortKey.split('#')[0]) : undefined;
    }),
  );
  const times = firsts.filter((t): t is number => t !== undefined && !Number.isNaN(t));
  return times.length === 0 ? undefined : new Date(Math.min(...times));
}
