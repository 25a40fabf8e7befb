import type { RecordCallInput } from '../../../lambdas/contexts/calls/calls';
import type { RuntimeInfo } from '../../../local/runtime-file';

/**
 * Writes straight to the runtime's table, through the domain modules, for what is not sensible or
 * not possible through the CLI: bulk data (a page over 100 calls, one CLI process per row would
 * take minutes), or a change the CLI always follows with a flush of the authorizer cache.
 */
async function onRuntimeTable<T>(info: RuntimeInfo, write: () => Promise<T>): Promise<T> {
  const saved = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT };
  process.env.TABLE_NAME = info.tableName;
  process.env.DYNAMODB_ENDPOINT = info.dynamodbEndpoint;
  try {
    // The shared module reads the two variables when first imported, which is inside `write`.
    return await write();
  } finally {
    // Later runtimes spawned by this worker inherit its environment; leave it as it was.
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * `recordCall`, the domain's write of a whole call at once (`admin simulate call` goes through signed carrier callbacks
 * instead).
 */
export async function recordCalls(info: RuntimeInfo, tenantId: string, calls: RecordCallInput[]): Promise<void> {
  await onRuntimeTable(info, async () => {
    const { recordCall } = await import('../../../lambdas/contexts/calls/calls');
    for (let i = 0; i < calls.length; i += 10)
      await Promise.all(calls.slice(i, i + 10).map((call) => recordCall(tenantId, call)));
  });
}

/** Revokes a key in the table alone, as `key revoke` does minus its flush of the authorizer cache. */
export async function revokeInTableOnly(info: RuntimeInfo, keyId: string): Promise<void> {
  await onRuntimeTable(info, async () => {
    const { revokeApiKey } = await import('../../../lambdas/contexts/tenants/api-keys');
    await revokeApiKey(keyId);
  });
}
