import { apiKeyOfAuthorizationHeader } from './api-key-format';
import { findApiKeyByHash, hashApiKey, isExpired } from './api-keys';
import { UnauthorizedError } from './errors';
import { DEFAULT_QUIET_HOURS, type OrganizationQuietHours, quietHoursOf } from './quiet-hours-policy';
import { effectiveScopes, planHasApiAccess, type Scope } from './scopes';
import { getTenant } from './tenants';

/** Who is calling: resolved from the key alone, never from anything else in the request. */
export type Principal = {
  tenant: { id: string; name: string; slug: string; plan: string };
  apiKey: { id: string; name: string; prefix: string; expiresAt: string | null; createdAt: string };
  scopes: Scope[];
  /** The organization's quiet-hours policy, as the decision read it (shown by GET /me). */
  quietHours: OrganizationQuietHours;
};

export type AuthDecision =
  | { effect: 'allow'; principal: Principal }
  | { effect: 'deny'; reason: 'unauthorized' | 'api_access_disabled' };

const UNAUTHORIZED = { effect: 'deny', reason: 'unauthorized' } as const;

/**
 * The whole authorizer decision: key hash -> key row -> organization. Missing, malformed,
 * unknown, revoked and expired keys are all "unauthorized" (401) and indistinguishable to the
 * caller; a plan without API access is 403.
 */
export async function authorizeAuthorizationHeader(
  header: string | undefined,
  now = new Date(),
): Promise<AuthDecision> {
  // API Gateway refuses any other header before invoking the authorizer (validationRegex); the
  // authorizer checks it all the same, as the one rule of what a key is.
  const key = apiKeyOfAuthorizationHeader(header);
  if (!key) return UNAUTHORIZED;
  const record = await findApiKeyByHash(hashApiKey(key));
  if (!record || record.revokedAt !== null || isExpired(record.expiresAt, now)) return UNAUTHORIZED;
  // Both reads strongly consistent: this decision is cached for the TTL, so it must not be made
  // on a row that a revocation or plan change just before a flush of the cache has not reached.
  const tenant = await getTenant(record.tenantId, { consistent: true });
  if (!tenant) return UNAUTHORIZED;
  if (!planHasApiAccess(tenant.plan)) return { effect: 'deny', reason: 'api_access_disabled' };
  return {
    effect: 'allow',
    principal: {
      tenant: { id: tenant.id, name: tenant.name, slug: tenant.slug, plan: tenant.plan },
      apiKey: {
        id: record.id,
        name: record.name,
        prefix: record.prefix,
        expiresAt: record.expiresAt,
        createdAt: record.createdAt,
      },
      scopes: record.scopes,
      quietHours: tenant.quietHours,
    },
  };
}

/**
 * API Gateway passes an authorizer's context to the integration as flat string values; these two
 * functions are the only encoding and decoding of it.
 */
export type AuthorizerContext = Record<string, string>;

export function principalToContext(principal: Principal): AuthorizerContext {
  return {
    tenantId: principal.tenant.id,
    tenantName: principal.tenant.name,
    tenantSlug: principal.tenant.slug,
    tenantPlan: principal.tenant.plan,
    keyId: principal.apiKey.id,
    keyName: principal.apiKey.name,
    keyPrefix: principal.apiKey.prefix,
    keyExpiresAt: principal.apiKey.expiresAt ?? '',
    keyCreatedAt: principal.apiKey.createdAt,
    scopes: principal.scopes.join(' '),
    quietHours: JSON.stringify(principal.quietHours),
  };
}

/** Rebuilds the principal in a handler; anything incomplete is treated as no authentication. */
export function principalFromContext(context: Record<string, unknown> | null | undefined, now = new Date()): Principal {
  const value = (name: string): string => {
    const v = context?.[name];
    if (typeof v !== 'string') throw new UnauthorizedError();
    return v;
  };
  const principal: Principal = {
    tenant: { id: value('tenantId'), name: value('tenantName'), slug: value('tenantSlug'), plan: value('tenantPlan') },
    apiKey: {
      id: value('keyId'),
      name: value('keyName'),
      prefix: value('keyPrefix'),
      expiresAt: value('keyExpiresAt') || null,
      createdAt: value('keyCreatedAt'),
    },
    scopes: effectiveScopes(value('scopes').split(' ')),
    quietHours: quietHoursOfContext(context?.quietHours),
  };
  if (!principal.tenant.id) throw new UnauthorizedError();
  // The authorizer's cached decision may outlive the key's expiry; the handler has the last word.
  // Nothing else is re-checked here: a context only exists for a key the authorizer allowed, whose
  // plan had API access then, and what changed since (a revocation, a plan) is known only to the
  // table. Reading it on every request is what the authorizer cache saves; the operator commands
  // that change either flush the stage's authorizer cache instead (local/admin/authorizer-cache.ts).
  if (isExpired(principal.apiKey.expiresAt, now)) throw new UnauthorizedError();
  return principal;
}

/** A decision cached before the policy existed carries none: the policy is then off, as it was. */
function quietHoursOfContext(encoded: unknown): OrganizationQuietHours {
  if (typeof encoded !== 'string') return DEFAULT_QUIET_HOURS;
  try {
    return quietHoursOf({ quietHours: JSON.parse(encoded) as unknown });
  } catch {
    return DEFAULT_QUIET_HOURS;
  }
}
