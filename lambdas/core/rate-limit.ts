import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from './aws';
import { isConditionalCheckFailed } from './dynamo';
import { PREFIX, tenantScopedPk } from './keys';
import { TTL_ATTRIBUTE } from './table-schema';

/**
 * The exact per-key limit of spec section 8: a fixed one-minute window counted in one row per key
 * and window. The update only counts while the count is under the limit, so concurrent requests
 * each get a distinct count and exactly `limit` of them are allowed, never more.
 */
export const WINDOW_MS = 60_000;
/** Windows are deleted by TTL a little after they end. */
const WINDOW_RETENTION_S = 120;

export type RateLimitState = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
};

export function windowOf(now: number): { start: number; resetSeconds: number } {
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  return { start, resetSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) };
}

export const rateWindowKey = (tenantId: string, keyId: string, windowStart: number) => ({
  pk: tenantScopedPk(tenantId, PREFIX.rateLimit, keyId),
  sk: new Date(windowStart).toISOString(),
});

/** Counts one request of a key against its window; `limit` 0 turns the limit off. */
export async function consumeKeyBudget(tenantId: string, keyId: string, limit: number, now = Date.now()): Promise<RateLimitState> {
  const { start, resetSeconds } = windowOf(now);
  if (limit <= 0) return { allowed: true, limit, remaining: limit, resetSeconds };
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: rateWindowKey(tenantId, keyId, start),
        UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':one': 1,
          ':limit': limit,
          ':expires': Math.ceil((start + WINDOW_MS) / 1000) + WINDOW_RETENTION_S,
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Number(Attributes?.count ?? limit);
    return { allowed: true, limit, remaining: Math.max(0, limit - count), resetSeconds };
  } catch (err) {
    if (isConditionalCheckFailed(err)) return { allowed: false, limit, remaining: 0, resetSeconds };
    throw err;
  }
}

/**
 * The headers of spec section 8 (`RateLimit-Limit`, `-Remaining`, `-Reset`, seconds) and the
 * current IETF draft's structured fields (`RateLimit-Policy`, `RateLimit`), for clients that
 * read either.
 */
export function rateLimitHeaders(state: RateLimitState, windowSeconds = WINDOW_MS / 1000): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    'RateLimit-Policy': `"default";q=${state.limit};w=${windowSeconds}`,
    RateLimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
  };
}
