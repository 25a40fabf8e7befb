import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { GSIS, projectionOf, TABLE_KEYS, TTL_ATTRIBUTE } from '../lambdas/shared/table/table-schema';

/**
 * Creates the single table on DynamoDB Local from the same key schema the CDK table construct
 * uses; a table that already exists is left as it is (a kept `--state-dir`).
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const gsis = Object.values(GSIS);
  const attributes = [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, ...gsis.flatMap((g) => [g.partitionKey, g.sortKey])];
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: gsis.map((g) => ({
          IndexName: g.indexName,
          KeySchema: [
            { AttributeName: g.partitionKey, KeyType: 'HASH' },
            { AttributeName: g.sortKey, KeyType: 'RANGE' },
          ],
          Projection: projectionOf(g.projection),
        })),
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  await client.send(new DescribeTableCommand({ TableName: tableName }));
}
