import { GetCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { cancellationReasons, CONDITION, failedCondition, isConditionalCheckFailed, str, type CancellationReason, type Item } from '../../shared/table/dynamo';
import { PREFIX, tenantPk, tenantScopedPk } from '../../shared/table/keys';
import { queryPage, type Page } from '../../shared/table/paging';
import { ROW_TYPES } from '../../shared/table/row-types';
import { GSIS } from '../../shared/table/table-schema';
import type { ListMessagesInput, Message, MessageStatus } from './schemas';
import { threadStatusUpdate, threadUpdateFor } from './threads';

/**
 * Message rows and their storage. A message and its thread are written in one transaction; ids
 * are UUIDv7 from `createdAt`, so a conversation (gsi1, one partition per external number) lists
 * newest first by id and a cursor is a message id. Carrier sids map to message ids through a
 * lookup row, so status callbacks, which only know the sid, find their message.
 */
export const messageKey = (tenantId: string, messageId: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.message}${messageId}`,
});

export const messageSidKey = (tenantId: string, messageSid: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.messageSid}${messageSid}`,
});

const conversationPk = (tenantId: string, counterpart: string) => tenantScopedPk(tenantId, PREFIX.conversation, counterpart);

/** Billing facts kept on outbound rows (not part of the API's Message). */
export type MessageCharge = { segments: number; costCents: number };

export function toItem(message: Message, charge?: MessageCharge): Item {
  return {
    ...messageKey(message.tenantId, message.id),
    [GSIS.gsi1.partitionKey]: conversationPk(message.tenantId, message.counterpartNumber),
    [GSIS.gsi1.sortKey]: `${PREFIX.message}${message.id}`,
    type: ROW_TYPES.message,
    ...message,
    ...charge,
  };
}

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
  };
}

const sidItem = (message: Message): Item => ({
  ...messageSidKey(message.tenantId, message.messageSid),
  type: 'messageSid',
  messageId: message.id,
  counterpartNumber: message.counterpartNumber,
});

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a transaction, retrying when it lost a race with another transaction on the same item
 * (`TransactionConflict`: concurrent texts of one thread). Any other cancellation is returned
 * for the caller to interpret; non-transaction errors are thrown.
 */
async function transact(items: TransactItems): Promise<CancellationReason[] | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const conflict = reasons.some((r) => r.code === 'TransactionConflict');
      const failed = reasons.some((r) => r.code === 'ConditionalCheckFailed');
      if (failed || !conflict) return reasons;
      if (attempt >= 10) throw err;
      await pause(Math.random() * 25 * attempt); // jittered, so racing writers spread out
    }
  }
}

export type StoreResult = { stored: true } | { stored: false; duplicateOf: string };

/**
 * Writes a new message and its thread in one transaction; an inbound message also claims its
 * carrier sid in the same transaction, so a carrier retry of the same text is stored once.
 */
export async function storeMessage(message: Message, charge?: MessageCharge): Promise<StoreResult> {
  const withSid = message.messageSid !== '';
  const items: TransactItems = [
    { Put: { TableName: TABLE_NAME, Item: toItem(message, charge), ConditionExpression: CONDITION.rowIsNew } },
    ...(withSid
      ? [{ Put: { TableName: TABLE_NAME, Item: sidItem(message), ConditionExpression: CONDITION.rowIsNew, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } }]
      : []),
  ];
  const threadIndex = items.length;
  let asLatest = true;
  for (let round = 0; round < 3; round += 1) {
    const reasons = await transact([...items, threadUpdateFor(message.tenantId, message, asLatest)]);
    if (!reasons) return { stored: true };
    const sidTaken = withSid ? failedCondition(reasons, 1) : undefined;
    if (sidTaken?.item) return { stored: false, duplicateOf: sidTaken.item.messageId as string };
    if (asLatest && failedCondition(reasons, threadIndex)) {
      asLatest = false; // a newer message is already the thread's last: only count this one
      continue;
    }
    break;
  }
  throw new Error(`storeMessage: could not write message ${message.id}`);
}

export async function getMessage(tenantId: string, messageId: string): Promise<Message> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: messageKey(tenantId, messageId), ConsistentRead: true }));
  if (!Item) throw new NotFoundError('Message');
  return fromItem(Item);
}

export async function findMessageIdBySid(tenantId: string, messageSid: string): Promise<string | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: messageSidKey(tenantId, messageSid), ConsistentRead: true }));
  return Item ? (Item.messageId as string) : undefined;
}

/**
 * Stores the sid the carrier gave an outbound message, and its lookup row, together. Status
 * callbacks can arrive as soon as the carrier has answered; until this is written they find no
 * message by sid (the carrier retries them).
 */
export async function recordMessageSid(message: Message, messageSid: string): Promise<void> {
  const reasons = await transact([
    {
      Update: {
        TableName: TABLE_NAME,
        Key: messageKey(message.tenantId, message.id),
        UpdateExpression: 'SET #sid = :sid',
        ConditionExpression: CONDITION.rowExists,
        ExpressionAttributeNames: { '#sid': 'messageSid' },
        ExpressionAttributeValues: { ':sid': messageSid },
      },
    },
    { Put: { TableName: TABLE_NAME, Item: sidItem({ ...message, messageSid }), ConditionExpression: CONDITION.rowIsNew } },
  ]);
  if (reasons) throw new Error(`recordMessageSid: could not record the sid of message ${message.id}`);
}

/** GET /messages/{counterpart}: newest first; each page goes further back in time. */
export async function listMessages(tenantId: string, counterpart: string, input: ListMessagesInput): Promise<Page<Message>> {
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
      ? { ...messageKey(tenantId, input.cursor), [GSIS.gsi1.partitionKey]: pk, [GSIS.gsi1.sortKey]: `${PREFIX.message}${input.cursor}` }
      : undefined,
    fromItem,
    idOf: (message) => message.id,
  });
}

// ---------- delivery status ----------

export type DeliveryStatus = Extract<MessageStatus, 'sent' | 'delivered' | 'failed'>;

/** The statuses each status may follow: queued -> sent -> delivered | failed, never backwards. */
const MAY_FOLLOW: Record<DeliveryStatus, MessageStatus[]> = {
  sent: ['queued'],
  delivered: ['queued', 'sent'],
  failed: ['queued', 'sent'],
};

export type MessageRef = { messageSid: string } | { messageId: string };

/**
 * Moves an outbound message forward (carrier status callbacks, the loopback carrier, a failed
 * send). A status that would go backwards, or repeats, changes nothing. The thread's `lastStatus`
 * follows in the same transaction while the message is still the thread's newest.
 */
export async function updateMessageStatus(
  tenantId: string,
  ref: MessageRef,
  status: DeliveryStatus,
): Promise<{ message: Message; changed: boolean }> {
  const messageId = 'messageId' in ref ? ref.messageId : await findMessageIdBySid(tenantId, ref.messageSid);
  if (!messageId) throw new NotFoundError('Message');
  const message = await getMessage(tenantId, messageId);
  const previous = MAY_FOLLOW[status];
  if (!previous.includes(message.status)) return { message, changed: false };

  const messageUpdate = {
    Update: {
      TableName: TABLE_NAME,
      Key: messageKey(tenantId, messageId),
      UpdateExpression: 'SET #status = :status',
      ConditionExpression: `#status IN (${previous.map((_, i) => `:from${i}`).join(', ')})`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ...Object.fromEntries(previous.map((s, i) => [`:from${i}`, s])) },
    },
  };
  const reasons = await transact([messageUpdate, threadStatusUpdate(tenantId, message.counterpartNumber, messageId, status)]);
  if (!reasons) return { message: { ...message, status }, changed: true };
  if (failedCondition(reasons, 0)) return { message: await getMessage(tenantId, messageId), changed: false };
  // Not the thread's newest message any more: the message alone changes.
  try {
    await dynamo.send(new UpdateCommand(messageUpdate.Update));
    return { message: { ...message, status }, changed: true };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    return { message: await getMessage(tenantId, messageId), changed: false };
  }
}
