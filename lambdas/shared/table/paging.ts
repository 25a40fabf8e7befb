import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws';
import type { Item } from './dynamo';

export type Page<T> = { items: T[]; nextCursor: string | null };

type PageQuery<T> = {
  /** The query without paging: key condition, index, order, optional filter. */
  query: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>;
  limit: number;
  /** The key of the row the cursor names, whether or not that row still exists. */
  startKey?: Item;
  fromItem: (item: Item) => T;
  idOf: (value: T) => string;
};

/**
 * One page of a list ordered by id. Reads one row more than asked so that `nextCursor` is null
 * exactly on the last page. Without a filter that is a single Query; with a filter (search) it
 * keeps reading until it has `limit + 1` matches or the partition ends, because DynamoDB applies
 * `Limit` before the filter.
 */
export async function queryPage<T>({ query, limit, startKey, fromItem, idOf }: PageQuery<T>): Promise<Page<T>> {
  const items: T[] = [];
  let exclusiveStartKey = startKey;
  const filtered = query.FilterExpression !== undefined;
  do {
    const result = await dynamo.send(
      new QueryCommand({
        ...query,
        ExclusiveStartKey: exclusiveStartKey,
        ...(!filtered && { Limit: limit + 1 - items.length }),
      }),
    );
    for (const item of result.Items ?? []) items.push(fromItem(item));
    exclusiveStartKey = result.LastEvaluatedKey;
  } while (exclusiveStartKey && items.length <= limit);

  if (items.length <= limit) return { items, nextCursor: null };
  const page = items.slice(0, limit);
  return { items: page, nextCursor: idOf(page[page.length - 1]) };
}
