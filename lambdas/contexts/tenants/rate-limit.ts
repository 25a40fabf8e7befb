import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { isConditionalCheckFailed } from '../../shared/table/dynamo';
import { PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { TTL_ATTRIBUTE } from '../../shared/table/table-schema';
import { WINDOW_MS, windowOf, type RateLimitState } from './rate-limit-window';

/**
 * The exact per-key limit of spec section 8: a fixed one-minute window counted in one row per key
 * and window. The update only counts while the count is under the limit, so concurrent requests
 * each get a distinct count and exactly `limit` of them are allowed, never more.
 */

/** Windows are deleted by TTL a little after they end. */
const WINDOW_RETENTION_S = 120;

export const rateWindowKey = (tenantId: string, keyId: string, windowStart: number) => ({
  pk: tenantScopedPk(tenantId, PREFIX.rateLimit, keyId),
  sk: new Date(windowStart).toISOString(),
});

/** Counts one request of a key against its window; `limit` 0 turns the limit off. */
export async function consumeKeyBudget(
  tenantId: string,
  keyId: string,
  limit: number,
  now = Date.now(),
): Promise<RateLimitState> {
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
