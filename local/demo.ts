import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TENANT_SK } from '../lambdas/shared/table/keys';
import { SCOPES } from '../lambdas/contexts/tenants/scopes';

/**
 * The demo organization and key an empty local store starts with, so `npm start` gives a working
 * API at once. Uses the domain modules, which read TABLE_NAME at import: call only after the
 * runtime has set it.
 */
export const DEMO_TENANT = {
  name: 'Demo Organization',
  plan: 'pro',
  smsNumber: '+15005550006',
  billingStatus: 'active',
} as const;

export type DemoOutcome = { created: true; tenantId: string; key: string } | { created: false; tenantId: string | null };

/** Whether any organization row exists; stops at the first one found. */
async function hasAnyTenant(client: DynamoDBClient, tableName: string): Promise<boolean> {
  let startKey: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'sk = :tenant',
        ExpressionAttributeValues: { ':tenant': { S: TENANT_SK } },
        ProjectionExpression: 'pk',
        ExclusiveStartKey: startKey,
      }),
    );
    if ((page.Items ?? []).length > 0) return true;
    startKey = page.LastEvaluatedKey as typeof startKey;
  } while (startKey);
  return false;
}

/**
 * Creates the demo organization and its all-scopes key on a store with no organization yet.
 * On kept data it creates nothing; the previous demo organization is reported while it exists.
 */
export async function ensureDemoOrganization(
  client: DynamoDBClient,
  tableName: string,
  previousDemoTenantId: string | null,
): Promise<DemoOutcome> {
  const [{ createTenant, getTenant }, { createApiKey }] = await Promise.all([
    import('../lambdas/contexts/tenants/tenants'),
    import('../lambdas/contexts/tenants/api-keys'),
  ]);
  if (await hasAnyTenant(client, tableName)) {
    const stillThere = previousDemoTenantId !== null && (await getTenant(previousDemoTenantId)) !== undefined;
    return { created: false, tenantId: stillThere ? previousDemoTenantId : null };
  }
  const tenant = await createTenant({ ...DEMO_TENANT });
  const { key } = await createApiKey({ tenantId: tenant.id, name: 'Demo key', scopes: [...SCOPES] });
  return { created: true, tenantId: tenant.id, key };
}

/** The one time the demo key is shown: printed to the console, never logged anywhere else. */
export function demoBanner(outcome: DemoOutcome, apiBaseUrl: string, inMemory: boolean): string {
  if (!outcome.created) {
    return [
      'Using the kept data: the demo API key was printed on first start (keys are stored only as a hash).',
      'Lost it? Create another: npm run admin -- key create --tenant <tenantId>' +
        (outcome.tenantId ? `   (demo organization: ${outcome.tenantId})` : ''),
    ].join('\n');
  }
  const rule = '='.repeat(78);
  return [
    rule,
    `  Demo organization created: ${DEMO_TENANT.name} (plan ${DEMO_TENANT.plan}), id ${outcome.tenantId}`,
    '  Its API key, with all five scopes. It is shown only now; copy it:',
    '',
    `      ${outcome.key}`,
    '',
    '  Try it:',
    `      curl -H "Authorization: Bearer ${outcome.key}" ${apiBaseUrl}/me`,
    '',
    inMemory
      ? '  --in-memory: nothing is kept, so every start creates a new organization and key.'
      : '  The data is kept in the state directory; later starts reuse this key.',
    rule,
  ].join('\n');
}
