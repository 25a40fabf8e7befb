import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { localDynamoClient } from '../../local/dynamodb-local';

// Drops the file's table once its tests ran, so a long mutation run holds one table per worker at a time.
afterAll(async () => {
  const endpoint = process.env.DYNAMODB_LOCAL_ENDPOINT;
  if (!endpoint) return;
  const client = localDynamoClient(endpoint);
  try {
    await client.send(new DeleteTableCommand({ TableName: process.env.TABLE_NAME! }));
  } catch {
    // a unit file made no table
  } finally {
    client.destroy();
  }
});
