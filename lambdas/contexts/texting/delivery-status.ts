import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { CONDITION, isConditionalCheckFailed, num, str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { CHANGED_AT, changeRequestParts, type ChangeRequest } from '../../shared/table/row-types';
import { NamedTransaction, type NamedItems } from '../../shared/table/named-transaction';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { updateExpression } from '../../shared/table/update-expression';
import { GSIS } from '../../shared/table/table-schema';
import {
  costCentsOfItem,
  findMessageIdBySid,
  fromItem,
  getMessageItem,
  keyOf,
  messageKey,
  sidItem,
  spendShardOfItem,
  type FailureReason,
} from './messages';
import type { Message, MessageStatus } from './schemas';
import { CARRIER_MESSAGE, CARRIER_REPORTED_AT } from './outcome-facts';
import { refundShard } from './spend';
import { threadStatusUpdate } from './threads';

/**
 * An outbound text's fate after it was queued: the carrier's sid, and its status moving forward
 * (carrier status callbacks in any order, the send's own outcome, the settlement sweep). Every
 * change is one transaction guarded on the status it moves from, so duplicates and late arrivals
 * change nothing, and a text that fails is refunded in the same transaction: exactly once.
 */
export type DeliveryStatus = Extract<MessageStatus, 'sent' | 'delivered' | 'failed'>;

/** The statuses each status may follow: queued -> sent -> delivered | failed, never backwards. */
const MAY_FOLLOW: Record<DeliveryStatus, MessageStatus[]> = {
  sent: ['queued'],
  delivered: ['queued', 'sent'],
  failed: ['queued', 'sent'],
};

/** How a callback names its message: our id (from its URL) when it has it, the carrier's sid always. */
export type MessageRef = { messageSid: string } | { messageId: string; messageSid?: string };

export type StatusChangeOptions = {
  /** Kept on a failed row: why it failed (the replay of a refused send reads it). */
  failureReason?: FailureReason;
  /** The carrier's error code of a refusal, kept with the reason. */
  carrierCode?: number;
  /** The carrier's own words for a failure (its error message), kept with the code. */
  carrierMessage?: string;
  /**
   * When the carrier reported a final status (its callback or its answer arrived); absent when it never did (the
   * sweep).
   */
  reportedAt?: Date;
  /** The sweep: change only a text still unsettled (no carrier answer recorded). */
  onlyIfUnsettled?: boolean;
  /**
   * The API request whose own answer this change is (a send the carrier refused at once), named by the event; none
   * for the carrier's callbacks and the sweep.
   */
  request?: ChangeRequest | null;
};

/** Removed when a text's outcome is known: its entry in the settlement sweep's worklist. */
const UNSETTLED_INDEX = [GSIS.gsi2.partitionKey, GSIS.gsi2.sortKey];

/** The parts of a status change's transaction, by name. */
type StatusPart = 'message' | 'refund' | 'messageSid' | 'threadStatus';

/** Rounds of deciding a change afresh when the row moved under it (another callback, the send's answer). */
const SID_ROUNDS = { what: 'record a message sid', rounds: 4, site: 'texting.sid' };
const STATUS_ROUNDS = { what: 'change a message status', rounds: 4, site: 'texting.status' };

/** The sid lookup row of a message: harmless when it already names this message. */
function sidPut(message: Pick<Message, 'tenantId' | 'id' | 'counterpartNumber'>, messageSid: string): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: sidItem(message, messageSid),
      ConditionExpression: `${CONDITION.rowIsNew} OR messageId = :id`,
      ExpressionAttributeValues: { ':id': message.id },
    },
  };
}

/**
 * The carrier accepted a text (or a callback named its sid first): store the sid, which settles
 * the text's outcome (it leaves the sweep's worklist). Returns false when the row already holds
 * another sid (nothing changes).
 *
 * Two plain writes, not a transaction: the lookup row first (idempotent: it may only ever name
 * this message), then the sid on the message row. A crash between them leaves a lookup row and an
 * unsettled text, which its status callback (it names the message) settles as it would without
 * either. A transaction would cost twice the write units and hold the message row, which the
 * carrier's first status callback, arriving moments later, also writes.
 */
export async function recordMessageSid(
  tenantId: string,
  messageId: string,
  messageSid: string,
  /**
   * The send that just stored the text `queued` with no sid (./hand-over.ts): its first round writes without reading
   * the row back, since the update's condition refuses exactly what that read would (another sid); a refusal reads.
   */
  justStored?: Pick<Message, 'counterpartNumber'>,
): Promise<boolean> {
  return optimisticRounds(SID_ROUNDS, async (round) => {
    if (round === 0 && justStored)
      return (await writeSid({ tenantId, id: messageId, ...justStored }, messageSid)) ? true : LOST_RACE;
    const row = await getMessageItem(tenantId, messageId);
    const message = fromItem(row);
    if (message.messageSid !== '' && message.messageSid !== messageSid) return false;
    if (message.messageSid === messageSid && row[GSIS.gsi2.partitionKey] === undefined) return true;
    return (await writeSid(message, messageSid)) ? true : LOST_RACE;
  });
}

/** The lookup row, then the sid on the message row; false when the row's condition refused it (read and decide). */
async function writeSid(message: Pick<Message, 'tenantId' | 'id' | 'counterpartNumber'>, messageSid: string) {
  await dynamo.send(new PutCommand(sidPut(message, messageSid).Put!));
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: messageKey(message.tenantId, message.id),
        ...updateExpression(withRowSequenceBump({ set: { messageSid }, remove: UNSETTLED_INDEX }), {
          expression: `${CONDITION.rowExists} AND (attribute_not_exists(#messageSid) OR #messageSid IN (:empty, :sid))`,
          values: { ':empty': '', ':sid': messageSid },
        }),
      }),
    );
    return true;
  } catch (err) {
    // Another sid won, or a callback changed the row: read again and decide.
    if (!isConditionalCheckFailed(err)) throw err;
    return false;
  }
}

async function messageIdOf(tenantId: string, ref: MessageRef): Promise<string> {
  const messageId = 'messageId' in ref ? ref.messageId : await findMessageIdBySid(tenantId, ref.messageSid);
  if (!messageId) throw new NotFoundError('Message');
  return messageId;
}

/** The refund of a failed text, to the spend shard it was charged on (./spend.ts). */
function refundOf(tenantId: string, row: Item): TransactItem[] {
  const cost = costCentsOfItem(row);
  const shard = spendShardOfItem(row);
  if (cost <= 0 || row.direction !== 'outbound' || shard === undefined) return [];
  return [refundShard(tenantId, shard, cost)];
}

/**
 * Moves an outbound message forward; a status that would go backwards, or repeats, changes
 * nothing. A callback's sid is recorded on the way if the send's answer never was. A text that
 * fails gets its charge back in the same transaction. The thread's `lastStatus` follows while the
 * message is still the thread's newest.
 */
export async function updateMessageStatus(
  tenantId: string,
  ref: MessageRef,
  status: DeliveryStatus,
  options: StatusChangeOptions = {},
): Promise<StatusAnswer> {
  const messageId = await messageIdOf(tenantId, ref);
  const callbackSid = 'messageSid' in ref ? ref.messageSid : undefined;
  return optimisticRounds(STATUS_ROUNDS, () => statusRound(tenantId, messageId, { status, callbackSid, options }));
}

type StatusAnswer = { message: Message; changed: boolean };

/** A change asked for: the status, the sid a callback named (if it did), and how. */
type StatusChange = { status: DeliveryStatus; callbackSid: string | undefined; options: StatusChangeOptions };

/**
 * One round: read the row, decide whether the status moves from what was read, and write the move
 * (with its refund and its sid) conditioned on that status. LOST_RACE when the row moved meanwhile.
 */
async function statusRound(
  tenantId: string,
  messageId: string,
  change: StatusChange,
): Promise<RoundResult<StatusAnswer>> {
  const { status, callbackSid, options } = change;
  const row = await getMessageItem(tenantId, messageId);
  const message = fromItem(row);
  const recordSid = callbackSid !== undefined && message.direction === 'outbound' && message.messageSid === '';
  const moves =
    MAY_FOLLOW[status].includes(message.status) &&
    !(options.onlyIfUnsettled && row[GSIS.gsi2.partitionKey] === undefined);
  if (!moves) {
    if (recordSid && !options.onlyIfUnsettled) await recordMessageSid(tenantId, messageId, callbackSid);
    return { message: recordSid ? { ...message, messageSid: callbackSid } : message, changed: false };
  }
  const sid = recordSid ? callbackSid : undefined;
  const parts = statusChangeParts(tenantId, row, message, change, sid);
  const changed: Message = { ...message, status, ...(recordSid && { messageSid: callbackSid }) };
  return writeStatusChange(tenantId, messageId, message, { status, parts, changed });
}

/**
 * The writes of a move: the message row (guarded on the statuses it may follow, and for the sweep
 * on being unsettled), a failed text's refund, and the callback's sid row when it is recorded now.
 */
function statusChangeParts(
  tenantId: string,
  row: Item,
  message: Message,
  { status, options }: StatusChange,
  sid: string | undefined,
): NamedItems<StatusPart> {
  const previous = MAY_FOLLOW[status];
  const failing = status === 'failed';
  // The final status is the message.delivered or message.failed event: its time (CHANGED_AT), the
  // carrier's report time and the row's sequence number go in the same write (shared/table/row-sequence.ts).
  const attributes = {
    status,
    [CHANGED_AT]: Date.now(),
    messageSid: sid,
    failureReason: failing ? (options.failureReason ?? 'carrier_failed') : undefined,
    carrierCode: failing ? options.carrierCode : undefined,
    [CARRIER_MESSAGE]: failing ? options.carrierMessage : undefined,
    [CARRIER_REPORTED_AT]: status === 'sent' ? undefined : options.reportedAt?.getTime(),
  };
  // Every move names its request or none, so the event never names an earlier write's (webhooks/events.ts).
  const request = changeRequestParts(options.request);
  const messageUpdate: TransactItem = {
    Update: {
      TableName: TABLE_NAME,
      Key: keyOf(row),
      ...updateExpression(
        withRowSequenceBump({
          set: { ...attributes, ...request.set },
          remove: [...UNSETTLED_INDEX, ...request.remove],
        }),
        {
          expression:
            `#status IN (${previous.map((_, i) => `:from${i}`).join(', ')})` +
            (options.onlyIfUnsettled ? ` AND attribute_exists(#${GSIS.gsi2.partitionKey})` : ''),
          values: Object.fromEntries(previous.map((from, i) => [`:from${i}`, from])),
        },
      ),
    },
  };
  return {
    message: messageUpdate,
    refund: failing ? refundOf(tenantId, row) : [],
    messageSid: sid !== undefined ? sidPut(message, sid) : undefined,
  };
}

/**
 * The move's transaction, with the thread's lastStatus first; when the message is no longer the
 * thread's newest (that condition alone failed), again without it.
 */
async function writeStatusChange(
  tenantId: string,
  messageId: string,
  message: Message,
  move: { status: DeliveryStatus; parts: NamedItems<StatusPart>; changed: Message },
): Promise<RoundResult<StatusAnswer>> {
  const { status, parts, changed } = move;
  const refusal = await new NamedTransaction<StatusPart>()
    .addAll(parts)
    .add('threadStatus', threadStatusUpdate(tenantId, message.counterpartNumber, messageId, status))
    .write();
  if (!refusal) return { message: changed, changed: true };
  if (refusal.failed('message')) return LOST_RACE; // moved meanwhile: read again and decide afresh
  if (!refusal.failed('threadStatus'))
    throw new Error(`updateMessageStatus: could not change message ${messageId} (${refusal.codes})`);
  const withoutThread = await new NamedTransaction<StatusPart>().addAll(parts).write();
  if (!withoutThread) return { message: changed, changed: true };
  if (withoutThread.failed('message')) return LOST_RACE;
  throw new Error(`updateMessageStatus: could not change message ${messageId} (${withoutThread.codes})`);
}

/** Why a failed row failed (undefined for rows failed before reasons were kept), and the carrier's code. */
export const failureOf = (row: Item): { reason: FailureReason | undefined; carrierCode: number | null } => ({
  reason: (str(row.failureReason) as FailureReason | null) ?? undefined,
  carrierCode: num(row.carrierCode),
});
