import { z } from 'zod';
import type { CreateApiKeyInput } from '../../../lambdas/contexts/tenants/api-keys';
import { gracePeriod, option, parseOptions, ROTATION_GRACE, uuidPositional } from '../options';
import { defineCommand } from '../registry';
import { appliedTarget, isAwsTable, type DeployedStack } from '../target';
import { requireTenant } from './require-tenant';

/**
 * `key create` and `key revoke`: the portal's Settings, API Keys. Against a deployed stack
 * (`--stack`) each service key also has an API Gateway API key in the stack's usage plan, whose
 * value the authorizer returns as `usageIdentifierKey` (lambdas/contexts/tenants/api-keys.ts,
 * `usagePlanKeyValueOf`): `key create` makes it, `key revoke` deletes it. The local runtime has
 * no usage plans, so there a key is only its table row.
 */
export const keyCreate = defineCommand({
  words: ['key', 'create'],
  summary: 'Issue an API key (with --stack also its usage-plan key); the full key is printed once and stored only as a hash',
  usage: '--tenant <id> [--name <s>] [--scopes <scope,scope,...>] [--expires-at <iso>]',
  options: {
    tenant: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    'expires-at': { type: 'string' },
  },
  parse: ({ values }): CreateApiKeyInput => {
    const o = parseOptions(
      z.object({ tenant: option.uuid, name: option.text.optional(), scopes: option.scopes.optional(), 'expires-at': option.isoDateTime.optional() }),
      values,
    );
    // Stored in UTC like every timestamp of the service, whatever offset the operator typed.
    const expiresAt = o['expires-at'] === undefined ? undefined : new Date(o['expires-at']).toISOString();
    return { tenantId: o.tenant, name: o.name, scopes: o.scopes, expiresAt };
  },
  run: async (input) => {
    const target = appliedTarget();
    if (target && isAwsTable(target) && !target.stack) {
      // The key would work only while the stack does not require usage-plan keys (the default does).
      throw new Error('A key for a deployed stack needs its API Gateway usage-plan key: give --stack <name> [--region <r>] instead of --table-name');
    }
    await requireTenant(input.tenantId);
    const { createApiKey, publicApiKey, revokeApiKey } = await import('../../../lambdas/contexts/tenants/api-keys');
    const { key, apiKey } = await createApiKey(input);
    if (!target?.stack) return { key, apiKey: publicApiKey(apiKey) };

    const { stack } = target;
    let usagePlanKey;
    try {
      usagePlanKey = await createUsagePlanKeyFor(stack, apiKey.id, `organization ${input.tenantId}`);
    } catch (err) {
      // Never hand out a key API Gateway would refuse: take it back before reporting.
      await revokeApiKey(apiKey.id).catch(() => undefined);
      throw new Error(`Could not create the API Gateway key for the new API key ${apiKey.id}, which was revoked again: ${(err as Error).message}`, { cause: err });
    }
    return { key, apiKey: publicApiKey(apiKey), baseUrl: stack.apiBaseUrl, usagePlanKey };
  },
});

async function createUsagePlanKeyFor(stack: DeployedStack, keyId: string, whose: string) {
  const { usagePlanKeyValueOf } = await import('../../../lambdas/contexts/tenants/api-keys');
  const created = await stack.aws.createUsagePlanKey({
    usagePlanId: stack.usagePlanId,
    value: usagePlanKeyValueOf(keyId),
    description: `Usage-plan key of service API key ${keyId} (${whose}, stack ${stack.name})`,
  });
  return { apiGatewayKeyId: created.apiKeyId, usagePlanId: stack.usagePlanId };
}

export const keyList = defineCommand({
  words: ['key', 'list'],
  summary: "An organization's API keys, oldest first, with state active|rotating_out|expired|revoked (never a key or its hash)",
  usage: '--tenant <id>',
  options: { tenant: { type: 'string' } },
  parse: ({ values }) => parseOptions(z.object({ tenant: option.uuid }), values),
  run: async ({ tenant }) => {
    await requireTenant(tenant);
    return { apiKeys: await describeKeysOf(tenant) };
  },
});

/** An organization's keys as `key list` and `tenant show` print them. */
export async function describeKeysOf(tenantId: string) {
  const { listApiKeys, operatorApiKeyView } = await import('../../../lambdas/contexts/tenants/api-keys');
  const now = new Date();
  return (await listApiKeys(tenantId)).map((record) => operatorApiKeyView(record, now));
}

export const keyRotate = defineCommand({
  words: ['key', 'rotate'],
  summary: `Replace an API key: a new key (printed once, same name and scopes); the old one keeps working for --grace (default ${ROTATION_GRACE.defaultText}), then expires`,
  usage: '[--grace <30m|24h|7d|0>] [--expires-at <iso>]',
  positionals: ['keyId'],
  options: { grace: { type: 'string' }, 'expires-at': { type: 'string' } },
  parse: ({ values, positionals }) => {
    const keyId = uuidPositional('keyId')({ positionals });
    const o = parseOptions(z.object({ grace: gracePeriod().optional(), 'expires-at': option.isoDateTime.optional() }), values);
    const expiresAt = o['expires-at'] === undefined ? undefined : new Date(o['expires-at']).toISOString();
    return { keyId, graceSeconds: o.grace ?? ROTATION_GRACE.defaultSeconds, expiresAt };
  },
  run: async ({ keyId, graceSeconds, expiresAt }) => {
    const { rotateApiKey, publicApiKey, operatorApiKeyView, usagePlanKeyValueOf } = await import('../../../lambdas/contexts/tenants/api-keys');
    const { uuidv7 } = await import('../../../lambdas/shared/ids');
    const stack = appliedTarget()?.stack;
    // Against a stack the new key's usage-plan key comes first: the new key must work the moment it is shown.
    const newKeyId = uuidv7();
    const usagePlanKey = stack ? await createUsagePlanKeyFor(stack, newKeyId, `replacing key ${keyId}`) : undefined;
    try {
      const { key, apiKey, replaced } = await rotateApiKey(keyId, { graceSeconds, expiresAt, newKeyId });
      return {
        key,
        apiKey: publicApiKey(apiKey),
        replaced: operatorApiKeyView(replaced, new Date()),
        ...(stack && { baseUrl: stack.apiBaseUrl, usagePlanKey }),
      };
    } catch (err) {
      // Nothing was rotated: the usage-plan key made for it goes again.
      if (stack) await stack.aws.deleteUsagePlanKey(usagePlanKeyValueOf(newKeyId)).catch(() => undefined);
      throw err;
    }
  },
});

export const keyRevoke = defineCommand({
  words: ['key', 'revoke'],
  summary: 'Revoke an API key by id (with --stack also delete its usage-plan key; else the authorizer cache may honour it for up to its TTL)',
  usage: '',
  positionals: ['keyId'],
  options: {},
  parse: uuidPositional('keyId'),
  run: async (keyId) => {
    const { revokeApiKey, publicApiKey, usagePlanKeyValueOf } = await import('../../../lambdas/contexts/tenants/api-keys');
    const record = await revokeApiKey(keyId);
    const apiKey = { ...publicApiKey(record), revokedAt: record.revokedAt };
    const stack = appliedTarget()?.stack;
    if (!stack) return { apiKey };
    // Revoked first: the table row is what the authorizer trusts. Deleting the API Gateway key
    // then also stops requests that a cached authorizer decision would still let through.
    const deleted = await stack.aws.deleteUsagePlanKey(usagePlanKeyValueOf(keyId));
    return { apiKey, usagePlanKey: deleted ? { apiGatewayKeyId: deleted.apiKeyId, deleted: true } : null };
  },
});
