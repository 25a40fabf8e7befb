import { ensureTable } from '../../local/create-table';
import { localDynamoClient, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import { LOCAL_TABLE_NAME } from '../../local/runtime-file';

/**
 * DynamoDB Local holding the local runtime's table, with this process's environment pointed at both: set before
 * anything imports lambdas/shared/aws, which reads it once at load. The bench and its probes start from here.
 */
export async function startEngineWithLocalTable(): Promise<DynamoDbLocal> {
  const ddb = await startDynamoDbLocal();
  process.env.TABLE_NAME = LOCAL_TABLE_NAME;
  process.env.DYNAMODB_ENDPOINT = ddb.endpoint;
  const admin = localDynamoClient(ddb.endpoint);
  try {
    await ensureTable(admin, LOCAL_TABLE_NAME);
  } catch (err) {
    await ddb.stop();
    throw err;
  } finally {
    admin.destroy();
  }
  return ddb;
}
