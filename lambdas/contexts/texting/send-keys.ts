import { createHash } from 'node:crypto';
import { TABLE_NAME } from '../../shared/aws';
import { CONDITION, type Item } from '../../shared/table/dynamo';
import { PREFIX, tenantPk } from '../../shared/table/keys';
import { TTL_ATTRIBUTE } from '../../shared/table/table-schema';
import type { TransactItem } from '../../shared/table/dynamo';
import type { SendMessageInput } from './schemas';

/**
 * The Idempotency-Key of POST /messages, kept by the domain rather than around the handler: its
 * row is written in the same transaction as the charge and the `queued` message, so a key names
 * exactly one text from the moment it is charged. A retry, while the first is in flight or after
 * any outcome, finds the row and answers with that message as it now stands; it never reaches the
 * carrier. Like Stripe's keys, a key keeps its first outcome, failures included.
 *
 * Rows live in the organization's partition, keyed by a hash of the key (the key itself is never
 * stored), and expire after 24 hours like every Idempotency-Key.
 */
export const SEND_KEY_TTL_SECONDS = 24 * 60 * 60;

export type SendKey = { messageId: string; requestHash: string };

const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

export const sendKeyKey = (tenantId: string, idempotencyKey: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.sendKey}${hashOf(idempotencyKey)}`,
});

/**
 * The request a key was first used with, compared on a retry (the same body twice hashes alike);
 * `sendAt` and `category` count only when given, so a send without them hashes as it always did.
 */
export const requestHashOf = (input: SendMessageInput): string =>
  hashOf(JSON.stringify({ to: input.to, body: input.body, sendAt: input.sendAt, category: input.category }));

export function sendKeyPut(tenantId: string, idempotencyKey: string, key: SendKey, now: Date): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: {
        ...sendKeyKey(tenantId, idempotencyKey),
        type: 'sendKey',
        ...key,
        [TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + SEND_KEY_TTL_SECONDS,
      },
      // An expired row may linger until DynamoDB's TTL removes it: it no longer holds the key.
      ConditionExpression: `${CONDITION.rowIsNew} OR #ttl < :now`,
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * The key a row holds at `now`: held while its TTL second has not passed, exactly the rows the
 * claim's condition (`ttl < now`) refuses to take over, so the two never disagree.
 */
export const sendKeyOf = (item: Item | undefined, now: Date): SendKey | undefined =>
  item && typeof item.messageId === 'string' && (item[TTL_ATTRIBUTE] as number) >= Math.floor(now.getTime() / 1000)
    ? { messageId: item.messageId, requestHash: item.requestHash as string }
    : undefined;
