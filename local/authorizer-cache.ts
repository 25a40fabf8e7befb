import { createHash } from 'node:crypto';

/**
 * API Gateway's authorizer result cache, for the local runtime. Like API Gateway it reuses the
 * authorizer's result (its policy, or its refusal) for the TTL, keyed on the token (the whole
 * Authorization header), whichever method it was first asked for; so locally too a key revoked
 * in the table alone keeps working until its cached decision expires, and the operator CLI
 * flushes the cache (through local/runtime-control.ts) when it revokes one. The map is keyed on
 * the SHA-256 of the header so that no key is ever held in clear where a debugger or a log of
 * the map would show it.
 */
export type AuthorizerCacheOptions<T> = {
  ttlSeconds: number;
  /** The authorizer, asked with the token and the method ARN of the request that missed the cache. */
  authorize: (authorizationHeader: string, methodArn: string) => Promise<T>;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Expired entries are swept when the map grows past this, so a flood of bad keys cannot grow it forever. */
  maxEntries?: number;
};

export type AuthorizerCache<T> = {
  decide: (authorizationHeader: string, methodArn?: string) => Promise<T>;
  size: () => number;
  /**
   * API Gateway's FlushStageAuthorizersCache: every decision is dropped and the next request of
   * each key asks the authorizer again. Returns how many were dropped.
   */
  flush: () => number;
  /**
   * Resolves once every decision asked for before the call has been answered (and cached, as
   * API Gateway caches it), with how many there were; each ends within the authorizer's timeout
   * (./authorizer.ts). A flush after it leaves no decision read before the flush's own call in the
   * cache: the local runtime's wait between the operator CLI's two flushes (local/admin/authorizer-cache.ts).
   */
  settle: () => Promise<number>;
  /** How many decisions are being asked for now. */
  inFlight: () => number;
};

const cacheKey = (header: string): string => createHash('sha256').update(header).digest('hex');

export function createAuthorizerCache<T>({
  ttlSeconds,
  authorize,
  now = Date.now,
  maxEntries = 10_000,
}: AuthorizerCacheOptions<T>): AuthorizerCache<T> {
  const entries = new Map<string, { decision: T; expiresAt: number }>();
  const ttlMs = ttlSeconds * 1000;
  const asking = new Set<Promise<unknown>>();

  const sweep = (at: number) => {
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
    // Still too many live entries: drop the oldest (a Map iterates in insertion order).
    for (const key of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(key);
    }
  };

  return {
    decide(header, methodArn = '') {
      if (ttlMs === 0) return authorize(header, methodArn);
      const key = cacheKey(header);
      const hit = entries.get(key);
      if (hit && hit.expiresAt > now()) return Promise.resolve(hit.decision);
      // Cached whenever it comes, flush or not: API Gateway does the same, which is the window
      // the operator CLI's second flush closes.
      const asked = authorize(header, methodArn).then((decision) => {
        entries.delete(key);
        entries.set(key, { decision, expiresAt: now() + ttlMs });
        if (entries.size > maxEntries) sweep(now());
        return decision;
      });
      asking.add(asked);
      const done = () => asking.delete(asked);
      asked.then(done, done);
      return asked;
    },
    size: () => entries.size,
    flush() {
      const dropped = entries.size;
      entries.clear();
      return dropped;
    },
    async settle() {
      const pending = [...asking];
      await Promise.allSettled(pending);
      return pending.length;
    },
    inFlight: () => asking.size,
  };
}
