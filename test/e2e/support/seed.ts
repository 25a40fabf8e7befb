import type { RecordCallInput } from '../../../lambdas/contexts/calls/calls';
import type { RuntimeInfo } from '../../../local/runtime-file';

/**
 * Bulk data for tests that need more rows than is sensible to feed through one CLI process per
 * row (a page over 100 calls). It calls `recordCall` on the runtime's table: the domain's write of
 * a whole call at once (`admin simulate call` goes through signed carrier callbacks instead).
 */
export async function recordCalls(info: RuntimeInfo, tenantId: string, calls: RecordCallInput[]): Promise<void> {
  const saved = { TABLE_NAME: process.env.TABLE_NAME, DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT };
  process.env.TABLE_NAME = info.tableName;
  process.env.DYNAMODB_ENDPOINT = info.dynamodbEndpoint;
  try {
    // The shared module reads the two variables when first imported, which is now.
    const { recordCall } = await import('../../../lambdas/contexts/calls/calls');
    for (let i = 0; i < calls.length; i += 10) await Promise.all(calls.slice(i, i + 10).map((call) => recordCall(tenantId, call)));
  } finally {
    // Later runtimes spawned by this worker inherit its environment; leave it as it was.
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
