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

export type DemoOutcome =
  | { created: true; tenantId: string; key: string }
  | { created: false; tenantId: string | null };

/**
 * Finds the demo organization by a key, never by reading the table: it is the organization that
 * owns the demo SMS number, one GetItem on that number's owner row (`NUMBER_OWNER#<number>`, the
 * row carrier callbacks find their organization by). A start on 600,000 kept items costs what a
 * start on none does. On a store where no organization owns that number it creates the demo
 * organization and its all-scopes key; otherwise it creates nothing and reports the owner.
 */
export async function ensureDemoOrganization(): Promise<DemoOutcome> {
  const [{ createTenant, findTenantIdByNumber }, { createApiKey }] = await Promise.all([
    import('../lambdas/contexts/tenants/tenants'),
    import('../lambdas/contexts/tenants/api-keys'),
  ]);
  const ownerId = await findTenantIdByNumber(DEMO_TENANT.smsNumber);
  if (ownerId !== undefined) return { created: false, tenantId: ownerId };
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
