import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { CONDITION, num, str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { ownPartitionKey, PREFIX, tenantScopedPk, type Key } from '../../shared/table/keys';
import { queryPage, type Page } from '../../shared/table/paging';
import { CHANGED_AT, ROW_TYPES } from '../../shared/table/row-types';
import { FIRST_ROW_SEQUENCE } from '../../shared/table/row-sequence';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { GSIS } from '../../shared/table/table-schema';
import { NamedTransaction, type NamedItems, type Refusal } from '../../shared/table/named-transaction';
import { dueIndexKeys } from './due-list';
import type { MessageCategory } from './message-categories';
import type { CancelReason, ListMessagesInput, Message, MessageStatus } from './schemas';
import { threadWriteFor, threadWriteFrom } from './threads';

/**
 * Message rows and their storage. A message and its thread are written in one transaction; ids
 * are UUIDv7 from `createdAt`, so a conversation (gsi1, one partition per external number) lists
 * newest first by id and a cursor is a message id. Carrier sids map to message ids through a
 * lookup row, so status callbacks, which only know the sid, find their message.
 *
 * Each message is a partition of its own (`T#<org>#MSG#<id>` / `MESSAGE`), and so is each sid
 * lookup row: a text is written four times in its life (stored, its sid, sent, delivered), and on
 * the organization's partition those writes would add up to a partition DynamoDB throttles at
 * about 1,000 write units per second, some 125 texts per second for the whole organization.
 */
export const messageKey = (tenantId: string, messageId: string): Key => ownPartitionKey(tenantId, 'message', messageId);

export const messageSidKey = (tenantId: string, messageSid: string): Key =>
  ownPartitionKey(tenantId, 'messageSid', messageSid);

/** The key a stored row was read under: writes after a read go where the row is. */
export const keyOf = (row: Item): Key => ({ pk: row.pk as string, sk: row.sk as string });

const conversationPk = (tenantId: string, counterpart: string) =>
  tenantScopedPk(tenantId, PREFIX.conversation, counterpart);

/** Billing facts kept on outbound rows (not part of the API's Message): the spend shard charged (./spend.ts). */
export type MessageCharge = { segments: number; costCents: number; spendShard: number };

/**
 * Shards of the unsettled worklist, shared by every organization of the region: each text enters
 * one and leaves it (two narrow index entries, 2 write units), always at the end of its time-ordered
 * range, so a shard takes about 500 texts a second whatever DynamoDB splits; 32 take 16,000, above
 * what a region's API Gateway quota lets the service send (docs/capacity.md). The sweep reads every
 * shard on each run: a page each.
 */
export const UNSETTLED_SHARDS = 32;

export const unsettledPk = (shard: number): string => `${PREFIX.unsettled}${shard}`;

/**
 * An outbound text is unsettled from the moment it is charged until the carrier's answer (its
 * sid) or a final status is recorded: it sits in gsi2 under `UNSETTLED#<shard>`, sorted by
 * creation time, so the sweep finds the old ones without reading anything else
 * (./settlement.ts). Written with the message, so even a send that crashed is found.
 */
export function unsettledIndexKeys(
  message: Pick<Message, 'id' | 'tenantId' | 'createdAt'>,
  at = message.createdAt,
): Item {
  const shard = parseInt(message.id.slice(-2), 16) % UNSETTLED_SHARDS;
  return {
    [GSIS.gsi2.partitionKey]: unsettledPk(shard),
    [GSIS.gsi2.sortKey]: `${at}#${message.tenantId}#${message.id}`,
  };
}

const isUnsettled = (message: Message) =>
  message.direction === 'outbound' && message.status === 'queued' && message.messageSid === '';

export function toItem(message: Message, charge?: MessageCharge): Item {
  return {
    ...messageKey(message.tenantId, message.id),
    [GSIS.gsi1.partitionKey]: conversationPk(message.tenantId, message.counterpartNumber),
    [GSIS.gsi1.sortKey]: `${PREFIX.message}${message.id}`,
    ...(isUnsettled(message) && unsettledIndexKeys(message)),
    // A scheduled text waits in the due list instead (./due-list.ts); it enters the worklist when it fires.
    ...(message.status === 'scheduled' && message.sendAt && dueIndexKeys(message, message.sendAt)),
    type: ROW_TYPES.message,
    ...message,
    ...charge,
  };
}

/** The cost charged for an outbound row (0 for inbound rows). */
export const costCentsOfItem = (item: Item): number => num(item.costCents) ?? 0;

/** The spend shard an outbound row was charged on (undefined for inbound rows). */
export const spendShardOfItem = (item: Item): number | undefined => num(item.spendShard) ?? undefined;

export type { FailureReason } from './schemas';

export function fromItem(item: Item): Message {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    direction: item.direction as Message['direction'],
    fromNumber: item.fromNumber as string,
    toNumber: item.toNumber as string,
    counterpartNumber: item.counterpartNumber as string,
    body: item.body as string,
    status: item.status as MessageStatus,
    messageSid: str(item.messageSid) ?? '',
    agentId: str(item.agentId),
    isRead: item.isRead === true,
    createdAt: item.createdAt as string,
    // Only on the texts they concern, so every other message reads exactly as before.
    ...(typeof item.sendAt === 'string' && { sendAt: item.sendAt }),
    ...(typeof item.category === 'string' && { category: item.category as MessageCategory }),
    ...(typeof item.cancelReason === 'string' && { cancelReason: item.cancelReason as CancelReason }),
  };
}

export const sidItem = (message: Pick<Message, 'tenantId' | 'id' | 'counterpartNumber'>, messageSid: string): Item => ({
  ...messageSidKey(message.tenantId, messageSid),
  type: 'messageSid',
  messageId: message.id,
  counterpartNumber: message.counterpartNumber,
});

/** The parts a message's own transaction writes; the names of `alongside` differ from these. */
export type StoredPart = 'message' | 'messageSid' | 'thread';

export type StoreResult<A extends string = never> =
  | { stored: true }
  | { stored: false; duplicateOf: string }
  /** An item of `alongside` failed its condition: read the refusal by the names `alongside` gave. */
  | { stored: false; refused: Refusal<A | StoredPart> };

export type StoreOptions<A extends string = never> = {
  charge?: MessageCharge;
  /**
   * Writes and checks that must agree with the message, in the same transaction: the consent
   * check, the charge and the Idempotency-Key row of a send; the consent change of an inbound
   * keyword. When one fails its condition nothing is written and the caller decides.
   */
  alongside?: NamedItems<A>;
  /**
   * The thread row as the caller read it (`row` absent: no thread yet), for the first round only: a thread that moved
   * on since fails the write's condition, and the next round reads it again.
   */
  threadRead?: { row: Item | undefined };
};

/**
 * Rounds of reading the thread again when a concurrent message of the same conversation moved it
 * on between the read and the write: each lost round means another text landed, so a busy
 * conversation needs as many as it has texts in flight.
 */
const STORE_ROUNDS = { what: 'store a message: its thread kept moving on', rounds: 8, site: 'texting.store' };

/**
 * Writes a new message and its thread in one transaction, with `alongside`; an inbound message
 * also claims its carrier sid in the same transaction, so a carrier retry of the same text is
 * stored once.
 */
export async function storeMessage<A extends string = never>(
  message: Message,
  options: StoreOptions<A> = {},
): Promise<StoreResult<A>> {
  const alongside: NamedItems<A> = options.alongside ?? {};
  // An inbound insert is the sms.received event: its time, to the millisecond (CHANGED_AT), and the row's first
  // sequence number.
  const messagePut: TransactItem = {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...toItem(message, options.charge), [CHANGED_AT]: Date.now(), ...FIRST_ROW_SEQUENCE },
      ConditionExpression: CONDITION.rowIsNew,
    },
  };
  const sidPut: TransactItem | undefined =
    message.messageSid !== ''
      ? {
          Put: {
            TableName: TABLE_NAME,
            Item: sidItem(message, message.messageSid),
            ConditionExpression: CONDITION.rowIsNew,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
          },
        }
      : undefined;
  return optimisticRounds(STORE_ROUNDS, async (round): Promise<RoundResult<StoreResult<A>>> => {
    const refusal = await new NamedTransaction<A | StoredPart>()
      .addAll(alongside)
      .add('message', messagePut)
      .add('messageSid', sidPut)
      .add(
        'thread',
        round === 0 && options.threadRead
          ? threadWriteFrom(message, options.threadRead.row)
          : await threadWriteFor(message, round > 0),
      )
      .write();
    if (!refusal) return { stored: true };
    const sidTaken = refusal.failed('messageSid');
    if (sidTaken?.item) return { stored: false, duplicateOf: sidTaken.item.messageId as string };
    if ((Object.keys(alongside) as A[]).some((name) => refusal.failed(name)))
      return { stored: false, refused: refusal };
    // The thread moved on since it was read (a newer message, a new row): read it again.
    if (refusal.failed('thread')) return LOST_RACE;
    throw new Error(`storeMessage: message ${message.id} was refused (${refusal.codes})`);
  });
}

/** The stored row (strongly consistent), with the facts the API's Message leaves out (cost, failure reason). */
export async function getMessageItem(tenantId: string, messageId: string): Promise<Item> {
  const item = await readRow(messageKey(tenantId, messageId));
  if (!item) throw new NotFoundError('Message');
  return item;
}

const readRow = async (key: Key): Promise<Item | undefined> =>
  (await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }))).Item;

export async function getMessage(tenantId: string, messageId: string): Promise<Message> {
  return fromItem(await getMessageItem(tenantId, messageId));
}

export async function findMessageIdBySid(tenantId: string, messageSid: string): Promise<string | undefined> {
  const item = await readRow(messageSidKey(tenantId, messageSid));
  return item ? (item.messageId as string) : undefined;
}

/** GET /messages/{counterpart}: newest first; each page goes further back in time. */
export async function listMessages(
  tenantId: string,
  counterpart: string,
  input: ListMessagesInput,
): Promise<Page<Message>> {
  const pk = conversationPk(tenantId, counterpart);
  return queryPage({
    query: {
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi1.indexName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSIS.gsi1.partitionKey },
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
    },
    limit: input.limit,
    startKey: input.cursor
      ? {
          ...messageKey(tenantId, input.cursor),
          [GSIS.gsi1.partitionKey]: pk,
          [GSIS.gsi1.sortKey]: `${PREFIX.message}${input.cursor}`,
        }
      : undefined,
    fromItem,
    idOf: (message) => message.id,
  });
}
