import { TABLE_NAME } from '../../shared/aws';
import type { Item, TransactItem } from '../../shared/table/dynamo';
import { PREFIX, tenantScopedPk, type Key } from '../../shared/table/keys';
import { GSIS } from '../../shared/table/table-schema';
import type { Message } from './schemas';

/**
 * Where scheduled texts wait, with no scan anywhere:
 *
 * - **The due list**: a scheduled message row carries gsi2 keys `DUE#<shard>` / `<sendAt>#<tenant>#<id>`,
 *   so each shard is a time-ordered list of every organization's scheduled texts; the firing reads
 *   each shard from its oldest entry up to now (`sk < now`), a page at a time, and nothing else.
 *   The time slot is the sort key's prefix (an ISO instant sorts as time does), so the oldest due
 *   slot is always the first entry. The entry is the row's own index entry: it appears with the row
 *   and leaves in the write that fires, cancels or moves it, never out of step with the row.
 * - **A number's scheduled texts**: one small row per scheduled text under `T#<tenant>#SCHEDULED#<to>`,
 *   written in the scheduling transaction and deleted in the one that fires or cancels it, so a STOP
 *   reads them all with one strongly consistent Query of one partition (an index would be eventually
 *   consistent: a text scheduled a moment before the STOP could be missed). docs/decisions.md.
 */
export const DUE_SHARDS = 32;

export const duePk = (shard: number): string => `${PREFIX.due}${shard}`;

const shardOf = (messageId: string): number => parseInt(messageId.slice(-2), 16) % DUE_SHARDS;

/** The due-list entry of a scheduled text (its gsi2 keys). */
export function dueIndexKeys(message: Pick<Message, 'id' | 'tenantId'>, sendAt: string): Item {
  return {
    [GSIS.gsi2.partitionKey]: duePk(shardOf(message.id)),
    [GSIS.gsi2.sortKey]: dueSortKey(message, sendAt),
  };
}

export const dueSortKey = (message: Pick<Message, 'id' | 'tenantId'>, sendAt: string): string =>
  `${new Date(sendAt).toISOString()}#${message.tenantId}#${message.id}`;

/** The upper bound of the due list at `now`: every entry whose time is `now` or earlier sorts below it. */
export const dueCutoff = (now: Date): string => new Date(now.getTime() + 1).toISOString();

export const scheduledToPk = (tenantId: string, number: string): string =>
  tenantScopedPk(tenantId, PREFIX.scheduledTo.slice(0, -1), number);

export const scheduledToKey = (tenantId: string, number: string, messageId: string): Key => ({
  pk: scheduledToPk(tenantId, number),
  sk: `${PREFIX.message}${messageId}`,
});

/** The number's row of a newly scheduled text, in the scheduling transaction. */
export function scheduledToPut(message: Message): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: {
        ...scheduledToKey(message.tenantId, message.toNumber, message.id),
        type: 'scheduledTo',
        tenantId: message.tenantId,
        messageId: message.id,
      },
    },
  };
}

/** Removes that row, in the write that fires or cancels the text (harmless when already gone). */
export function scheduledToDelete(tenantId: string, number: string, messageId: string): TransactItem {
  return { Delete: { TableName: TABLE_NAME, Key: scheduledToKey(tenantId, number, messageId) } };
}
