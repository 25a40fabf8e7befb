import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../aws';
import type { Item } from './dynamo';
import { GSIS } from './table-schema';

/**
 * The row an operator names by its bare id (an API key, a webhook endpoint, a delivery), found
 * through its `gsi1` entry `<prefix><id>` because the operator does not know the tenant the
 * primary key starts with. Eventually consistent: the index lags a write briefly.
 */
export async function findByIdIndex(prefix: string, id: string): Promise<Item | undefined> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi1.indexName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSIS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': `${prefix}${id}` },
    }),
  );
  return Items?.[0];
}
