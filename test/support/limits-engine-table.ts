import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localEngineClientConfig } from '../../lambdas/shared/config';
import { startLimitsProxy, type LimitsProxy, type LimitsProxyOptions } from '../../local/dynamodb-limits/limits-proxy';

/**
 * The engine's own tests: a limits proxy on the integration project's DynamoDB Local (one
 * database per test file, so `sharedDb: false`), a client that never retries (a retried throttle
 * or conflict would hide it), and a table with a global secondary index, created through the proxy.
 */
export const TEST_TABLE = 'limits';
export const TEST_INDEX = 'byGroup';

export type EngineUnderTest = { proxy: LimitsProxy; client: DynamoDBClient; stop: () => Promise<void> };

export async function startEngineUnderTest(
  options: Omit<LimitsProxyOptions, 'upstream'> = {},
): Promise<EngineUnderTest> {
  // DynamoDB Local itself, even when this file runs on the run's limits engine (no proxy in front of a proxy).
  const upstream = process.env.DYNAMODB_LOCAL_ENDPOINT;
  if (!upstream)
    throw new Error('DYNAMODB_LOCAL_ENDPOINT is not set: run integration tests through the jest integration projects');
  const proxy = await startLimitsProxy({ upstream, sharedDb: false, checkComputedImages: true, ...options });
  const client = new DynamoDBClient({ ...localEngineClientConfig(proxy.endpoint), maxAttempts: 1 });
  return {
    proxy,
    client,
    stop: async () => {
      client.destroy();
      await proxy.stop();
    },
  };
}

/** The test table (created once per file; CreateTable passes through the proxy untouched). */
export async function createLimitsTable(client: DynamoDBClient): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: TEST_TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'group', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: TEST_INDEX,
          KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
}
