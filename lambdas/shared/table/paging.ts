import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws';
import { PAGE_ITEMS_BUDGET_BYTES, responseBytesOf } from '../response-limit';
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
 * exactly on the last page; the page also ends early rather than outgrow a Lambda response. Without a filter that is a
 * single Query; with a filter (search) it
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

  const page = fittingPage(items, limit);
  if (page.length === items.length) return { items, nextCursor: null };
  return { items: page, nextCursor: idOf(page[page.length - 1]) };
}

/**
 * The first `limit` items, or fewer when their response bytes would pass the page budget: a page
 * never outgrows Lambda's 6 MB response, whatever the rows hold (inbound texts are as long as the
 * carrier delivers them). The page then ends early with a `nextCursor`, as short pages may. The
 * first item always fits: a row is at most 400 KB, under 3 MB escaped.
 */
export function fittingPage<T>(items: T[], limit: number): T[] {
  let bytes = 0;
  const end = Math.min(items.length, limit);
  for (let i = 0; i < end; i += 1) {
    bytes += responseBytesOf(items[i]);
    if (bytes > PAGE_ITEMS_BUDGET_BYTES && i > 0) return items.slice(0, i);
  }
  return items.slice(0, end);
}
