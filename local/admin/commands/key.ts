import { z } from 'zod';
import type { CreateApiKeyInput } from '../../../lambdas/core/api-keys';
import { option, parseOptions, parsePositional } from '../options';
import { defineCommand } from '../registry';
import { requireTenant } from './require-tenant';

/** `key create` and `key revoke`: the portal's Settings, API Keys. */
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
    const o = parseOptions(
      z.object({ tenant: option.uuid, name: option.text.optional(), scopes: option.scopes.optional(), 'expires-at': option.isoDateTime.optional() }),
      values,
    );
    // Stored in UTC like every timestamp of the service, whatever offset the operator typed.
    const expiresAt = o['expires-at'] === undefined ? undefined : new Date(o['expires-at']).toISOString();
    return { tenantId: o.tenant, name: o.name, scopes: o.scopes, expiresAt };
  },
  run: async (input) => {
    await requireTenant(input.tenantId);
    const { createApiKey, publicApiKey } = await import('../../../lambdas/core/api-keys');
    const { key, apiKey } = await createApiKey(input);
    return { key, apiKey: publicApiKey(apiKey) };
  },
});

export const keyRevoke = defineCommand({
  words: ['key', 'revoke'],
  summary: 'Revoke an API key by id (the authorizer cache may honour it for up to its TTL)',
  usage: '',
  positionals: ['keyId'],
  options: {},
  parse: ({ positionals }) => parsePositional(option.uuid, 'keyId', positionals[0]),
  run: async (keyId) => {
    const { revokeApiKey, publicApiKey } = await import('../../../lambdas/core/api-keys');
    const record = await revokeApiKey(keyId);
    return { apiKey: { ...publicApiKey(record), revokedAt: record.revokedAt } };
  },
});
