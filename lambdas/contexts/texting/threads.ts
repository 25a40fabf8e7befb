import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { uuidv7Time } from '../../shared/ids';
import { CONDITION, num, str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { ownPartitionKey, PREFIX, tenantScopedPk, type Key } from '../../shared/table/keys';
import { batchGetItems } from '../../shared/table/batch-get';
import { fittingPage, queryPage, type Page } from '../../shared/table/paging';
import { GSIS } from '../../shared/table/table-schema';
import type { ListThreadsInput, Message, Thread } from './schemas';

/**
 * Threads: one row per external number, changed in the same transaction as each of its
 * messages. Counters use ADD, so concurrent inbound and outbound texts never lose a count; the
 * `last*` fields move only forward (guarded on the id of the newest message, which is a UUIDv7
 * and so sorts by time). gsi2 lists an organization's threads by last activity, with their keys
 * alone (`listThreads` says why).
 *
 * Each thread is a partition of its own (`T#<org>#THREAD#<number>` / `THREAD`), like messages
 * (./messages.ts says why).
 */
export const threadKey = (tenantId: string, counterpart: string): Key =>
  ownPartitionKey(tenantId, 'thread', counterpart);

const activityPk = (tenantId: string) => tenantScopedPk(tenantId, PREFIX.threadsByActivity);

export function fromItem(item: Item): Thread {
  return {
    counterpartNumber: item.counterpartNumber as string,
    lastMessage: item.lastMessage as string,
    lastDirection: item.lastDirection as Thread['lastDirection'],
    lastStatus: item.lastStatus as string,
    lastAt: item.lastAt as string,
    messageCount: num(item.messageCount) ?? 0,
    hasUnread: (num(item.unreadCount) ?? 0) > 0,
  };
}

/** gsi2's sort key: lastAt orders the index; the message id makes it unique and breaks same-instant ties. */
const activitySortKey = (lastAt: string, lastMessageId: string) => `${lastAt}#${lastMessageId}`;

/**
 * The row of a thread whose newest of `messageCount` messages is `newest`, as the updates below
 * leave it: for bulk loads (BatchWriteItem cannot run an update), such as the scale benchmark's.
 */
export function toItem(tenantId: string, newest: Message, messageCount = 1, unreadCount = 0): Item {
  return {
    ...threadKey(tenantId, newest.counterpartNumber),
    type: 'thread',
    counterpartNumber: newest.counterpartNumber,
    lastMessage: newest.body,
    lastDirection: newest.direction,
    lastStatus: newest.status,
    lastAt: newest.createdAt,
    lastMessageId: newest.id,
    messageCount,
    unreadCount,
    [GSIS.gsi2.partitionKey]: activityPk(tenantId),
    [GSIS.gsi2.sortKey]: activitySortKey(newest.createdAt, newest.id),
  };
}

async function readThread(key: Key, consistent: boolean): Promise<Item | undefined> {
  return (await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: consistent }))).Item;
}

/**
 * The thread's share of writing `message`, from the thread as it stands: when the message is newer
 * than everything the thread has seen it also becomes the thread's last message (guarded, so a
 * newer message landing meanwhile fails the transaction and the caller asks again); otherwise it
 * only counts. `consistent` after a lost race.
 */
export async function threadWriteFor(message: Message, consistent = false): Promise<TransactItem> {
  const { tenantId, counterpartNumber } = message;
  return threadWriteFrom(message, await readThread(threadKey(tenantId, counterpartNumber), consistent));
}

/** The same from the thread row a caller has read already (a send reads it with its other rows: ./sending.ts). */
export function threadWriteFrom(message: Message, current: Item | undefined): TransactItem {
  const { tenantId } = message;
  const lastId = str(current?.lastMessageId);
  return threadUpdateFor(tenantId, message, lastId === null || lastId < message.id, current !== undefined);
}

/**
 * The thread's update for writing `message`. `asLatest`: it becomes the thread's last message,
 * guarded on the thread's newest being older; otherwise only the counters move, guarded on the
 * thread existing (it was read), so a lost race is seen rather than a half row created.
 */
export function threadUpdateFor(tenantId: string, message: Message, asLatest: boolean, exists = true): TransactItem {
  const unread = message.direction === 'inbound' && !message.isRead ? 1 : 0;
  const counters = 'ADD #messageCount :one, #unreadCount :unread';
  const names = {
    '#messageCount': 'messageCount',
    '#unreadCount': 'unreadCount',
    '#type': 'type',
    '#counterpart': 'counterpartNumber',
  };
  const values = { ':one': 1, ':unread': unread, ':type': 'thread', ':counterpart': message.counterpartNumber };
  if (!asLatest) {
    return {
      Update: {
        TableName: TABLE_NAME,
        Key: threadKey(tenantId, message.counterpartNumber),
        UpdateExpression: `SET #type = :type, #counterpart = :counterpart ${counters}`,
        ConditionExpression: exists ? CONDITION.rowExists : undefined,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  }
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: threadKey(tenantId, message.counterpartNumber),
      UpdateExpression:
        'SET #type = :type, #counterpart = :counterpart, #lastMessage = :body, #lastDirection = :direction, ' +
        '#lastStatus = :status, #lastAt = :at, #lastMessageId = :id, #gsi2pk = :gsi2pk, #gsi2sk = :gsi2sk ' +
        counters,
      ConditionExpression: 'attribute_not_exists(#lastMessageId) OR #lastMessageId < :id',
      ExpressionAttributeNames: {
        ...names,
        '#lastMessage': 'lastMessage',
        '#lastDirection': 'lastDirection',
        '#lastStatus': 'lastStatus',
        '#lastAt': 'lastAt',
        '#lastMessageId': 'lastMessageId',
        '#gsi2pk': GSIS.gsi2.partitionKey,
        '#gsi2sk': GSIS.gsi2.sortKey,
      },
      ExpressionAttributeValues: {
        ...values,
        ':body': message.body,
        ':direction': message.direction,
        ':status': message.status,
        ':at': message.createdAt,
        ':id': message.id,
        ':gsi2pk': activityPk(tenantId),
        ':gsi2sk': activitySortKey(message.createdAt, message.id),
      },
    },
  };
}

/** The thread's `lastStatus`, changed only while `messageId` is still its newest message. */
export function threadStatusUpdate(
  tenantId: string,
  counterpart: string,
  messageId: string,
  status: string,
): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: threadKey(tenantId, counterpart),
      UpdateExpression: 'SET #lastStatus = :status',
      ConditionExpression: '#lastMessageId = :id',
      ExpressionAttributeNames: { '#lastStatus': 'lastStatus', '#lastMessageId': 'lastMessageId' },
      ExpressionAttributeValues: { ':status': status, ':id': messageId },
    },
  };
}

/**
 * GET /messages, one page: threads by last activity, newest first. The cursor is the id of the
 * newest message of the page's last thread (a UUIDv7, so a uuid as the spec's cursors are), and
 * it gives that thread's index key back with no read: `lastAt` is the instant the id was minted
 * from. The next page is a key condition below that key, so it costs O(page) however many
 * threads the organization has. A thread that gets a new message moves to the top, ahead of any
 * cursor: a client paging while texts arrive sees it when it starts again from the first page.
 *
 * The index holds each thread's keys only, and the page reads its threads by key (one Query, one
 * BatchGetItem): every text moves its thread in the index, a delete and a put on the
 * organization's one index partition, and an entry of keys is one write unit however long the
 * text, where a whole thread row (its last message included) cost up to four, plus one for each
 * status change of the text. docs/capacity.md has the figures.
 */
export async function listThreads(tenantId: string, input: ListThreadsInput): Promise<Page<Thread>> {
  const positions = await queryPage({
    query: {
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi2.indexName,
      KeyConditionExpression: input.cursor ? '#pk = :pk AND #sk < :before' : '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, ...(input.cursor && { '#sk': GSIS.gsi2.sortKey }) },
      ExpressionAttributeValues: {
        ':pk': activityPk(tenantId),
        ...(input.cursor && { ':before': activitySortKeyOf(input.cursor) }),
      },
      ScanIndexForward: false,
    },
    limit: input.limit,
    fromItem: (entry) => ({
      key: { pk: entry.pk as string, sk: entry.sk as string },
      lastMessageId: messageIdOfActivityKey(entry[GSIS.gsi2.sortKey] as string),
    }),
    idOf: (position) => position.lastMessageId,
  });
  const rows = new Map(
    (await batchGetItems(positions.items.map((p) => p.key))).map((row) => [
      `${row.pk as string} ${row.sk as string}`,
      row,
    ]),
  );
  // In the index's order; a row read after its thread moved on shows its newer last message.
  const listed = positions.items.flatMap((position) => {
    const row = rows.get(`${position.key.pk} ${position.key.sk}`);
    return row ? [{ thread: fromItem(row), lastMessageId: position.lastMessageId }] : [];
  });
  // The rows are what the response holds: the page ends early rather than outgrow a Lambda response.
  const threads = fittingPage(
    listed.map((row) => row.thread),
    listed.length,
  );
  const cut = threads.length < listed.length;
  return { items: threads, nextCursor: cut ? listed[threads.length - 1].lastMessageId : positions.nextCursor };
}

/** The message id in a thread's index sort key `<lastAt>#<messageId>`. */
const messageIdOfActivityKey = (sortKey: string): string => sortKey.slice(sortKey.indexOf('#') + 1);

/** gsi2's sort key of a thread whose newest message is `messageId`: `<lastAt>#<messageId>`. */
function activitySortKeyOf(messageId: string): string {
  return activitySortKey(new Date(uuidv7Time(messageId)).toISOString(), messageId);
}
