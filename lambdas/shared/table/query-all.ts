import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../aws';
import type { Item } from './dynamo';

/**
 * Every row of one key condition, following DynamoDB's pages. Only for partitions that stay small
 * (an organization's webhook endpoints or API keys) or for the operator's listings; request paths
 * that list what grows page with `queryPage` (paging.ts).
 */
export async function queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await dynamo.send(new QueryCommand({ ...input, TableName: TABLE_NAME, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}
