import { createHash } from 'node:crypto';
import type { AuthDecision } from '../lambdas/contexts/tenants/auth';

/**
 * API Gateway's authorizer result cache, for the local runtime. Like API Gateway it reuses a
 * decision, allow or deny, for the TTL, keyed on the token (the whole Authorization header); so
 * locally too a revoked key keeps working until its cached decision expires. The map is keyed on
 * the SHA-256 of the header so that no key is ever held in clear where a debugger or a log of
 * the map would show it.
 */
export type AuthorizerCacheOptions = {
  ttlSeconds: number;
  authorize: (authorizationHeader: string) => Promise<AuthDecision>;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Expired entries are swept when the map grows past this, so a flood of bad keys cannot grow it forever. */
  maxEntries?: number;
};

export type AuthorizerCache = {
  decide: (authorizationHeader: string) => Promise<AuthDecision>;
  size: () => number;
};

const cacheKey = (header: string): string => createHash('sha256').update(header).digest('hex');

export function createAuthorizerCache({ ttlSeconds, authorize, now = Date.now, maxEntries = 10_000 }: AuthorizerCacheOptions): AuthorizerCache {
  const entries = new Map<string, { decision: AuthDecision; expiresAt: number }>();
  const ttlMs = ttlSeconds * 1000;

  const sweep = (at: number) => {
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
    // Still too many live entries: drop the oldest (a Map iterates in insertion order).
    for (const key of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(key);
    }
  };

  return {
    async decide(header) {
      if (ttlMs === 0) return authorize(header);
      const key = cacheKey(header);
      const hit = entries.get(key);
      if (hit && hit.expiresAt > now()) return hit.decision;
      const decision = await authorize(header);
      entries.delete(key);
      entries.set(key, { decision, expiresAt: now() + ttlMs });
      if (entries.size > maxEntries) sweep(now());
      return decision;
    },
    size: () => entries.size,
  };
}
