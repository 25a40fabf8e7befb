import { z } from 'zod';
import type { CreateApiKeyInput } from '../../../lambdas/contexts/tenants/api-keys';
import { gracePeriod, option, parseOptions, ROTATION_GRACE, uuidPositional } from '../options';
import { defineCommand } from '../registry';
import { flushAfter } from '../authorizer-cache';
import { appliedTarget } from '../target';
import { requireTenant } from './require-tenant';

/**
 * `key create`, `key list`, `key rotate` and `key revoke`: the portal's Settings, API Keys. A key
 * is its table row and nothing else, here and in AWS: a deployed stage meters it by the usage-plan
 * bucket its id falls in (lambdas/handlers/authorizer/usage-plan-keys.ts), which the stack made, so
 * no command creates or deletes an API Gateway key. Revoking or rotating a key flushes the
 * authorizer cache, decisions in flight included (../authorizer-cache.ts), so the change bites from
 * the first request after the command returns, not after the cache TTL.
 */
/**
 * Built once: zod compiles a schema on its first use, which a script issuing thousands of keys in one process would pay
 * each time.
 */
const KEY_CREATE_OPTIONS = z.object({
  tenant: option.uuid,
  name: option.text.optional(),
  scopes: option.scopes.optional(),
  'expires-at': option.isoDateTime.optional(),
});

export const keyCreate = defineCommand({
  words: ['key', 'create'],
  summary: 'Issue an API key; the full key is printed once and stored only as a hash',
  usage: '--tenant <id> [--name <s>] [--scopes <scope,scope,...>] [--expires-at <iso>]',
  options: {
    tenant: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    'expires-at': { type: 'string' },
  },
  parse: ({ values }): CreateApiKeyInput => {
    const o = parseOptions(KEY_CREATE_OPTIONS, values);
    // Stored in UTC like every timestamp of the service, whatever offset the operator typed.
    const expiresAt = o['expires-at'] === undefined ? undefined : new Date(o['expires-at']).toISOString();
    return { tenantId: o.tenant, name: o.name, scopes: o.scopes, expiresAt };
  },
  run: async (input) => {
    await requireTenant(input.tenantId);
    const { createApiKey, publicApiKey } = await import('../../../lambdas/contexts/tenants/api-keys');
    const { key, apiKey } = await createApiKey(input);
    const stack = appliedTarget()?.stack;
    return { key, apiKey: publicApiKey(apiKey), ...(stack && { baseUrl: stack.apiBaseUrl }) };
  },
});

export const keyList = defineCommand({
  words: ['key', 'list'],
  summary:
    "An organization's API keys, oldest first, with state active|rotating_out|expired|revoked (never a key or its " +
    'hash)',
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
    const o = parseOptions(
      z.object({ grace: gracePeriod().optional(), 'expires-at': option.isoDateTime.optional() }),
      values,
    );
    const expiresAt = o['expires-at'] === undefined ? undefined : new Date(o['expires-at']).toISOString();
    return { keyId, graceSeconds: o.grace ?? ROTATION_GRACE.defaultSeconds, expiresAt };
  },
  run: async ({ keyId, graceSeconds, expiresAt }, context) => {
    const { rotateApiKey, publicApiKey, operatorApiKeyView } = await import(
      '../../../lambdas/contexts/tenants/api-keys'
    );
    const { key, apiKey, replaced } = await rotateApiKey(keyId, { graceSeconds, expiresAt });
    const stack = appliedTarget()?.stack;
    // A decision cached before the rotation carries no expiry; flushed, the old key's next one
    // carries the end of the grace period, which the handlers enforce to the second.
    return flushAfter(
      `API key ${keyId} was rotated to ${apiKey.id} (the new key is not shown again: rotate ${apiKey.id} if it is ` +
        `lost)`,
      context,
      {
        key,
        apiKey: publicApiKey(apiKey),
        replaced: operatorApiKeyView(replaced, new Date()),
        ...(stack && { baseUrl: stack.apiBaseUrl }),
      },
    );
  },
});

export const keyRevoke = defineCommand({
  words: ['key', 'revoke'],
  summary:
    'Revoke an API key by id; the authorizer cache is flushed, so it is refused on every request that starts after ' +
    'the command returns',
  usage: '',
  positionals: ['keyId'],
  options: {},
  parse: uuidPositional('keyId'),
  run: async (keyId, context) => {
    const { revokeApiKey, publicApiKey } = await import('../../../lambdas/contexts/tenants/api-keys');
    const record = await revokeApiKey(keyId);
    return flushAfter(`API key ${keyId} is revoked in the table`, context, {
      apiKey: { ...publicApiKey(record), revokedAt: record.revokedAt },
    });
  },
});
