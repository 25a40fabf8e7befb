import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { uuidv7, uuidv7LowerBound, uuidv7Time } from '../../shared/ids';
import type { Item } from '../../shared/table/dynamo';
import { PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { fittingPage } from '../../shared/table/paging';
import { rowSequenceOf } from '../../shared/table/row-sequence';
import { ROW_TYPES } from '../../shared/table/row-types';
import { ResyncRequiredError } from './errors';
import { decodeFeedCursor, encodeFeedCursor } from './feed-cursor';
import { GSIS } from '../../shared/table/table-schema';
import type { Contact, DeletedContact } from './schemas';

/**
 * The feed of changes of a directory (`GET /contacts?updatedSince=`): the `changes` index holds
 * every contact, and every tombstone of a deleted one, once, under the id of its last change: a
 * UUIDv7 minted from the change's time, so the index partition is in order of change and a
 * contact's entry moves to the end whenever it changes. Every write of anything a contact shows
 * sets it (contacts.ts, and consent-copies.ts when the number's consent changes), so a walk of the
 * feed from a time finds every contact as it last changed after that time.
 */
const CHANGES = GSIS.changes;

/** The `changes` index keys of a row changed now: they move the row to the end of the feed. */
export const changeIndexKeys = (tenantId: string, now: Date) => ({
  [CHANGES.partitionKey]: tenantScopedPk(tenantId, PREFIX.contactChanges),
  [CHANGES.sortKey]: uuidv7(now),
});

/** The attribute a change sets to move a row that is already in the feed (its partition key stays). */
export const CHANGE_KEY_ATTRIBUTE = CHANGES.sortKey;

export const TOMBSTONE_SK = 'TOMBSTONE';
/** Tombstones are kept this long (the table's TTL removes them, within about two days after). */
export const TOMBSTONE_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/**
 * The longest a write of the feed can take to become visible after the time it carries (docs/decisions.md, "A feed
 * that never lies"): a write takes its time before it commits, and commits before its function's timeout ends it
 * (60 s for the longest writers of contacts and consent: the text settlement; the API's functions stop at 10 s, or
 * 28 s for a batch); then the `changes` index follows the table, within about a second on AWS. Two minutes covers
 * both with room to spare; a watermark this far behind the server's clock only costs a walk re-reading two minutes.
 */
export const VISIBILITY_BOUND_MS = 2 * 60 * 1000;

/**
 * 410 `resync_required` when a walk that asks for deletions starts (or goes on) before the oldest time whose
 * deletions are all kept: the tombstones are judged by their own time, so the answer does not depend on when the
 * table's TTL removes them.
 */
function checkRetention(input: ChangesInput, after: string | undefined, now: Date): void {
  if (!input.includeDeleted) return;
  const oldestMs = now.getTime() - TOMBSTONE_RETENTION_SECONDS * 1000;
  const startMs = Math.max(Date.parse(input.updatedSince), after !== undefined ? uuidv7Time(after) : -Infinity);
  if (startMs < oldestMs) throw new ResyncRequiredError(new Date(oldestMs).toISOString());
}

export type ChangesInput = {
  updatedSince: string;
  cursor?: string;
  limit: number;
  includeDeleted: boolean;
  includeAutoCreated: boolean;
};

export type ChangesPage = {
  contacts: Contact[];
  deletedContacts: DeletedContact[];
  nextCursor: string | null;
  nextUpdatedSince: string;
};

const deletedContactOf = (item: Item): DeletedContact => ({
  id: item.id as string,
  deletedAt: item.deletedAt as string,
  externalId: typeof item.externalId === 'string' ? item.externalId : null,
  phoneNumber: typeof item.phoneNumber === 'string' ? item.phoneNumber : null,
  version: rowSequenceOf(item) || 1,
});

/**
 * One page of the feed: one Query of `limit + 1` index entries from the cursor (or from
 * `updatedSince`), oldest change first, whatever the size of the directory. What the page leaves
 * out (tombstones without `includeDeleted`, auto-created contacts with `includeAutoCreated=false`)
 * is filtered after DynamoDB's `Limit`, so a page may be short while `nextCursor` is not null: the
 * cursor is the change id of the last entry read, kept or not, so the next page starts right after
 * it and nothing is read twice or skipped. Eventually consistent, like every list.
 */
export async function changesPage(
  tenantId: string,
  input: ChangesInput,
  contactOf: (item: Item) => Contact,
  now = new Date(),
): Promise<ChangesPage> {
  const cursor = decodeFeedCursor(input.cursor);
  checkRetention(input, cursor.after, now);
  const since = uuidv7LowerBound(Date.parse(input.updatedSince));
  // Both are positions in the index: the later one wins (an old cursor never reaches before `updatedSince`), and
  // neither is older than the retention when deletions are asked for, so no tombstone past it is served.
  const after = cursor.after !== undefined && cursor.after > since ? cursor.after : since;
  const filters: string[] = [];
  if (!input.includeDeleted) filters.push('#type = :contact');
  if (!input.includeAutoCreated) filters.push('(#type = :tombstone OR #isAutoCreated = :false)');
  const { Items = [], LastEvaluatedKey } = await dynamo.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: CHANGES.indexName,
      KeyConditionExpression: '#pk = :pk AND #change > :after',
      ...(filters.length > 0 && { FilterExpression: filters.join(' AND ') }),
      ExpressionAttributeNames: {
        '#pk': CHANGES.partitionKey,
        '#change': CHANGES.sortKey,
        ...(filters.length > 0 && { '#type': 'type' }),
        ...(!input.includeAutoCreated && { '#isAutoCreated': 'isAutoCreated' }),
      },
      ExpressionAttributeValues: {
        ':pk': tenantScopedPk(tenantId, PREFIX.contactChanges),
        ':after': after,
        ...(!input.includeDeleted && { ':contact': ROW_TYPES.contact }),
        ...(!input.includeAutoCreated && { ':tombstone': ROW_TYPES.contactTombstone, ':false': false }),
      },
      ScanIndexForward: true,
      Limit: input.limit + 1,
    }),
  );
  const entries = Items.map((item) => ({
    change: item[CHANGES.sortKey] as string,
    contact: item.type === ROW_TYPES.contact ? contactOf(item) : undefined,
    deleted: item.type === ROW_TYPES.contactTombstone ? deletedContactOf(item) : undefined,
  }));
  const kept = fittingPage(entries, input.limit);
  const nextChange =
    kept.length < entries.length
      ? kept[kept.length - 1].change
      : LastEvaluatedKey
        ? (LastEvaluatedKey[CHANGES.sortKey] as string)
        : null;
  return {
    contacts: kept.flatMap((entry) => (entry.contact ? [entry.contact] : [])),
    deletedContacts: kept.flatMap((entry) => (entry.deleted ? [entry.deleted] : [])),
    ...walkOn(nextChange, cursor.watermarkMs, now),
  };
}

/**
 * Where a walk goes on, and from when a new walk loses nothing. An entry is settled once the visibility bound has
 * passed since its time: every change before it is visible. A page that ends on settled entries lost nothing, so a new
 * walk may start at its last entry's time. A page that ends on a younger entry may have passed a change still on
 * its way (its time is behind, its entry not yet in the index): from then on the walk carries a watermark behind
 * every such change (its cursors are UUIDv8, ./feed-cursor.ts), and `nextUpdatedSince` never passes it. The last
 * page answers the server's clock less the bound, or the watermark when older.
 */
function walkOn(nextChange: string | null, carriedMs: number | undefined, now: Date) {
  const settledMs = now.getTime() - VISIBILITY_BOUND_MS;
  if (nextChange === null) {
    return { nextCursor: null, nextUpdatedSince: new Date(Math.min(carriedMs ?? Infinity, settledMs)).toISOString() };
  }
  const positionMs = uuidv7Time(nextChange);
  const watermarkMs = carriedMs ?? (positionMs > settledMs ? settledMs : undefined);
  return {
    nextCursor: encodeFeedCursor(nextChange, watermarkMs),
    nextUpdatedSince: new Date(Math.min(watermarkMs ?? Infinity, positionMs)).toISOString(),
  };
}
