import { z } from 'zod';
import type { CreateApiKeyInput } from '../../../lambdas/contexts/tenants/api-keys';
import { option, parseOptions, parsePositional } from '../options';
import { defineCommand } from '../registry';
import { appliedTarget, isAwsTable } from '../target';
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
    const { createApiKey, publicApiKey, revokeApiKey, usagePlanKeyValueOf } = await import('../../../lambdas/contexts/tenants/api-keys');
    const { key, apiKey } = await createApiKey(input);
    if (!target?.stack) return { key, apiKey: publicApiKey(apiKey) };

    const { stack } = target;
    let usagePlanKey;
    try {
      usagePlanKey = await stack.aws.createUsagePlanKey({
        usagePlanId: stack.usagePlanId,
        value: usagePlanKeyValueOf(apiKey.id),
        description: `Usage-plan key of service API key ${apiKey.id} (organization ${input.tenantId}, stack ${stack.name})`,
      });
    } catch (err) {
      // Never hand out a key API Gateway would refuse: take it back before reporting.
      await revokeApiKey(apiKey.id).catch(() => undefined);
      throw new Error(`Could not create the API Gateway key for the new API key ${apiKey.id}, which was revoked again: ${(err as Error).message}`, { cause: err });
    }
    return {
      key,
      apiKey: publicApiKey(apiKey),
      baseUrl: stack.apiBaseUrl,
      usagePlanKey: { apiGatewayKeyId: usagePlanKey.apiKeyId, usagePlanId: stack.usagePlanId },
    };
  },
});

export const keyRevoke = defineCommand({
  words: ['key', 'revoke'],
  summary: 'Revoke an API key by id (with --stack also delete its usage-plan key; else the authorizer cache may honour it for up to its TTL)',
  usage: '',
  positionals: ['keyId'],
  options: {},
  parse: ({ positionals }) => parsePositional(option.uuid, 'keyId', positionals[0]),
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
