import { ensureTable } from '../../local/create-table';
import { localDynamoClient } from '../../local/dynamodb-local';

/** Creates this test file's table (named by integration-env.ts) on the shared DynamoDB Local. */
export async function createTestTable(): Promise<void> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint)
    throw new Error('DYNAMODB_ENDPOINT is not set: run integration tests through the jest integration project');
  const client = localDynamoClient(endpoint);
  try {
    await ensureTable(client, process.env.TABLE_NAME!);
  } finally {
    client.destroy();
  }
}
