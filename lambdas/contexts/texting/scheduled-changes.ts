import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, TABLE_NAME } from '../../shared/aws';
import { isConditionalCheckFailed, type Item } from '../../shared/table/dynamo';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { CHANGED_AT, changeRequestParts, type ChangeRequest } from '../../shared/table/row-types';
import { GSIS } from '../../shared/table/table-schema';
import { updateExpression } from '../../shared/table/update-expression';
import { consentOf } from '../consent/ledger';
import { readOrganizationRow } from '../tenants/billing-policy';
import { quietHoursOf } from '../tenants/quiet-hours-policy';
import { dueIndexKeys, scheduledToDelete, scheduledToPk } from './due-list';
import { NotScheduledError } from './errors';
import { instantUnderQuietHours } from './quiet-hours-rule';
import { scheduledInstantOf } from './send-time';
import { costCentsOfItem, fromItem, getMessageItem, keyOf, spendShardOfItem } from './messages';
import type { CancelReason, Message } from './schemas';
import { refundShard } from './spend';
import { threadStatusUpdate } from './threads';

/**
 * Changes to a scheduled text before it fires: a cancel (by the API, by its recipient's opt-out,
 * by a billing block found at its time) and a move to another time. Each is one write guarded on
 * the row still being `scheduled`, so a cancel racing the firing either wins (the text never goes
 * out, its charge comes back in the same transaction) or loses (the text is on its way: 409).
 */

/** Rounds of deciding again when the row moved between the read and the write (a reschedule, the firing). */
const CHANGE_ROUNDS = { what: 'change a scheduled text', rounds: 4, site: 'texting.scheduledChange' };

const UNDUE = [GSIS.gsi2.partitionKey, GSIS.gsi2.sortKey];
const STILL_SCHEDULED = {
  expression: '#status = :scheduled',
  names: { '#status': 'status' },
  values: { ':scheduled': 'scheduled' },
};

/**
 * Cancels a scheduled text and gives its charge back, in one transaction: the row `canceled` with
 * its reason (the message.canceled event), out of the due list, the number's row of it deleted, the
 * refund to the shard it was charged on. Throws 409 `not_scheduled` once it fired or was canceled.
 */
export async function cancelScheduledText(
  tenantId: string,
  messageId: string,
  reason: CancelReason,
  request: ChangeRequest | null = null,
): Promise<Message> {
  // The cancel names its request, or none (the firing, a STOP): the event never names an earlier write's.
  const origin = changeRequestParts(request);
  return optimisticRounds(CHANGE_ROUNDS, async (): Promise<RoundResult<Message>> => {
    const row = await getMessageItem(tenantId, messageId);
    const message = fromItem(row);
    if (message.status !== 'scheduled') throw new NotScheduledError(messageId, message.status);
    const refusal = await new NamedTransaction<'message' | 'refund' | 'scheduledTo'>()
      .add('message', {
        Update: {
          TableName: TABLE_NAME,
          Key: keyOf(row),
          ...updateExpression(
            withRowSequenceBump({
              set: { status: 'canceled', cancelReason: reason, [CHANGED_AT]: Date.now(), ...origin.set },
              remove: [...UNDUE, ...origin.remove],
            }),
            STILL_SCHEDULED,
          ),
        },
      })
      .add('refund', ...refundOfScheduled(tenantId, row))
      .add('scheduledTo', scheduledToDelete(tenantId, message.toNumber, messageId))
      .write();
    if (refusal?.failed('message')) return LOST_RACE;
    if (refusal) throw new Error(`cancel: message ${messageId} was refused (${refusal.codes})`);
    await followInThread(message, 'canceled');
    return { ...message, status: 'canceled', cancelReason: reason };
  });
}

/**
 * Every text scheduled to `number` canceled at once (a STOP, the carrier's opt-out, an opt-out
 * recorded through the consent API, whose request each cancel names): one strongly consistent
 * Query of the number's rows, then a cancel each. Texts that fired or were canceled meanwhile are left as they are. Returns how many
 * it canceled. A text this misses (a crash half way) is still never sent: the firing checks consent
 * again at its time and cancels it then.
 */
export async function cancelScheduledTextsTo(
  tenantId: string,
  number: string,
  reason: CancelReason,
  request: ChangeRequest | null = null,
): Promise<number> {
  let canceled = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': scheduledToPk(tenantId, number) },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      try {
        await cancelScheduledText(tenantId, item.messageId as string, reason, request);
        canceled += 1;
      } catch (err) {
        if (!(err instanceof NotScheduledError)) throw err;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return canceled;
}

/**
 * An opt-out's cancel: every text scheduled to the number, while the ledger says opted out (an opt-out
 * older than an opt-in on record is history and cancels nothing). Whoever recorded it calls this after
 * the change committed: a STOP, the carrier's opt-out, `POST /consent`.
 */
export async function cancelScheduledWhileOptedOut(
  tenantId: string,
  number: string,
  request: ChangeRequest | null = null,
): Promise<number> {
  if ((await consentOf(tenantId, number)).status !== 'opted_out') return 0;
  return cancelScheduledTextsTo(tenantId, number, 'opted_out', request);
}

/**
 * PATCH /messages/{id}: a new `sendAt` from a request, within the bounds of scheduling (400 naming it otherwise),
 * then held to quiet hours as a send's is (./quiet-hours-rule.ts): 422 `quiet_hours` under `refuse`, moved to
 * the window's opening under `defer`. 409 once the text fired or was canceled.
 */
export async function rescheduleMessage(
  tenantId: string,
  messageId: string,
  sendAt: string,
  now = new Date(),
): Promise<Message> {
  const requested = scheduledInstantOf(sendAt, now);
  // Both strongly consistent: the policy as it stands now, the text as it stands now.
  const [row, organizationRow] = await Promise.all([
    getMessageItem(tenantId, messageId),
    readOrganizationRow(tenantId),
  ]);
  const message = fromItem(row);
  if (message.status !== 'scheduled') throw new NotScheduledError(messageId, message.status);
  const text = { to: message.toNumber, category: message.category };
  return rescheduleText(
    tenantId,
    messageId,
    await instantUnderQuietHours(text, requested, quietHoursOf(organizationRow)),
  );
}

/**
 * Moves a scheduled text to `sendAt` (already checked by the caller against the bounds and quiet
 * hours): its due-list entry moves with it in the same write. 409 once it fired or was canceled.
 */
export async function rescheduleText(tenantId: string, messageId: string, sendAt: Date): Promise<Message> {
  return optimisticRounds(CHANGE_ROUNDS, async (): Promise<RoundResult<Message>> => {
    const row = await getMessageItem(tenantId, messageId);
    const message = fromItem(row);
    if (message.status !== 'scheduled') throw new NotScheduledError(messageId, message.status);
    const at = sendAt.toISOString();
    return (await moveScheduled(row, message, sendAt)) ? { ...message, sendAt: at } : LOST_RACE;
  });
}

/**
 * One write moving a text, as read, to `sendAt` with its due-list entry; its reserved charge stays. False when
 * the row changed since it was read (fired, canceled or moved meanwhile).
 */
export async function moveScheduled(row: Item, message: Message, sendAt: Date): Promise<boolean> {
  const at = sendAt.toISOString();
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: keyOf(row),
        ...updateExpression(withRowSequenceBump({ set: { sendAt: at, ...dueIndexKeys(message, at) } }), {
          ...STILL_SCHEDULED,
          expression: `${STILL_SCHEDULED.expression} AND #sendAt = :wasSendAt`,
          names: { ...STILL_SCHEDULED.names, '#sendAt': 'sendAt' },
          values: { ...STILL_SCHEDULED.values, ':wasSendAt': message.sendAt },
        }),
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

/** The refund of a scheduled text's reserved charge, to the shard it was taken from. */
export function refundOfScheduled(tenantId: string, row: Item) {
  const cost = costCentsOfItem(row);
  const shard = spendShardOfItem(row);
  return cost > 0 && shard !== undefined ? [refundShard(tenantId, shard, cost)] : [];
}

/** The thread's `lastStatus` follows while the text is its newest; cosmetic, so a plain write that may miss. */
export async function followInThread(message: Message, status: string): Promise<void> {
  const { Update } = threadStatusUpdate(message.tenantId, message.counterpartNumber, message.id, status);
  try {
    await dynamo.send(new UpdateCommand(Update!));
  } catch (err) {
    if (!isConditionalCheckFailed(err)) logger.warn('Could not update a thread', { error: (err as Error).message });
  }
}
