import { metrics, MetricUnit } from '../../shared/aws';
import { IDEMPOTENT_REPLAYED_HEADER, IdempotencyMismatchError, NotFoundError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { batchGetByKey } from '../../shared/table/batch-get';
import type { Item } from '../../shared/table/dynamo';
import type { ChangeRequest } from '../../shared/table/row-types';
import { LOST_RACE } from '../../shared/table/optimistic-rounds';
import { notOptedOutCheck } from '../consent/ledger';
import { quietHoursOf } from '../tenants/quiet-hours-policy';
import { fromItem as tenantFromItem, tenantKey } from '../tenants/tenants';
import { segmentsOf, smsRateCentsOf } from './billing';
import { CARRIER_SEND_TIMEOUT_MS, type Carrier } from './carrier-port';
import { failureOf } from './delivery-status';
import { scheduledToPut } from './due-list';
import {
  CarrierRejectedError,
  CarrierTimeShortError,
  CarrierUnavailableError,
  NoSmsNumberError,
  RecipientOptedOutError,
} from './errors';
import { handOver } from './hand-over';
import type { QuietHoursPolicy } from './quiet-hours';
import { instantUnderQuietHours } from './quiet-hours-rule';
import { fromItem, getMessageItem, storeMessage } from './messages';
import { threadKey } from './threads';
import { chargeWithin, type ChargeAttempt } from './spend';
import { spendPolicyOf, type SpendPolicy } from './spend-lease';
import type { Message, SendMessageInput } from './schemas';
import { requestHashOf, sendKeyKey, sendKeyOf, sendKeyPut, type SendKey } from './send-keys';
import { scheduledInstantOf } from './send-time';

/**
 * POST /messages, designed like a payment: quiet hours (422, or a later `sendAt`) -> SMS number
 * (409) -> one transaction that checks the number's consent (409), charges the organization (402),
 * stores the message and its thread and claims the Idempotency-Key -> then either
 *   - with `sendAt` (asked for, or quiet hours' `defer`): the text is stored `scheduled` (its cost
 *     reserved, so the 402 comes now) and waits in the due list (./due-list.ts) until
 *     ./scheduled-texts.ts fires it; 201 at once;
 *   - at once: stored `queued`, then the carrier, at most once per key (./hand-over.ts: accepted
 *     201, unknown 201 still queued, refused 422/409, not sent 502).
 * Never log a body.
 */
export type SendOptions = {
  idempotencyKey?: string;
  now?: Date;
  /** What is left of the function's time (its Lambda context's); without it, no deadline is kept. */
  remainingMs?: () => number;
  /** The API request sending it: named by the event of a failure that is the send's own answer (./hand-over.ts). */
  request?: ChangeRequest | null;
};

/**
 * Time a send needs after this check: the reads and the charging transaction before the carrier,
 * the carrier's bounded call, and the write of its outcome after. A send with less left answers 503
 * before it charges anything, rather than be cut off mid-call with its outcome unknown.
 */
export const SEND_TIME_NEEDED_MS = CARRIER_SEND_TIMEOUT_MS + 2_000;

function keepTimeForCarrier(remainingMs: (() => number) | undefined): void {
  const left = remainingMs?.();
  if (left !== undefined && left < SEND_TIME_NEEDED_MS) throw new CarrierTimeShortError(left);
}
export type SendResult = { message: Message; replayed: boolean };

const REPLAYED = { [IDEMPOTENT_REPLAYED_HEADER]: 'true' };

export async function sendMessage(
  tenantId: string,
  input: SendMessageInput,
  carrier: Carrier,
  options: SendOptions = {},
): Promise<SendResult> {
  keepTimeForCarrier(options.remainingMs);
  const now = options.now ?? new Date();
  const requestHash = requestHashOf(input);
  const key = options.idempotencyKey ? { idempotencyKey: options.idempotencyKey, requestHash } : undefined;
  const rows = await readSendRows(tenantId, input.to, key?.idempotencyKey, now);
  if (rows.earlier) return replay(tenantId, rows.earlier, requestHash);

  const tenantRow = rows.organization;
  const sendAt = await sendTimeOf(input, quietHoursOf(tenantRow), now);
  const { message, segments, costCents } = newOutboundText(tenantId, tenantRow, input, now, sendAt);
  const charge = { segments, costCents, thread: rows.thread };
  const retried = await storeCharged(message, charge, spendPolicyOf(tenantRow), key, now);
  if (retried) return replay(tenantId, retried, requestHash);
  return sendNowOrLater(message, segments, carrier, options.request ?? null);
}

/**
 * What a send reads before it charges, in one strongly consistent BatchGetItem (three GetItems before): the
 * Idempotency-Key's row, the organization's row (a billing block, a lowered limit or a new quiet-hours policy bites
 * from the next send) and the conversation's thread, which the send's transaction moves on (its condition refuses a
 * thread that moved on since, and the store reads it again). A replay reads the thread for nothing: two rows, no trip.
 */
async function readSendRows(
  tenantId: string,
  to: string,
  idempotencyKey: string | undefined,
  now: Date,
): Promise<{ earlier: SendKey | undefined; organization: Item; thread: Item | undefined }> {
  const organizationKey = tenantKey(tenantId);
  const conversation = threadKey(tenantId, to);
  const keyRow = idempotencyKey === undefined ? undefined : sendKeyKey(tenantId, idempotencyKey);
  const rowAt = await batchGetByKey([organizationKey, conversation, ...(keyRow ? [keyRow] : [])], {
    consistentRead: true,
  });
  const earlier = keyRow && sendKeyOf(rowAt(keyRow), now);
  const organization = rowAt(organizationKey);
  if (!earlier && !organization) throw new NotFoundError('Tenant');
  return { earlier, organization: organization!, thread: rowAt(conversation) };
}

/**
 * When the text goes: undefined for now, else its `sendAt`. A requested `sendAt` keeps the bounds of scheduling
 * (400 naming it); then quiet hours (./quiet-hours-rule.ts) refuse the time (422, nothing charged or stored, so a
 * retry with the same Idempotency-Key is judged again) or move it to the window's opening. That opening is the
 * policy's time, not the request's: it may be under a minute away (the next firing sends it) and needs no bound.
 */
async function sendTimeOf(input: SendMessageInput, policy: QuietHoursPolicy, now: Date): Promise<Date | undefined> {
  const requested = input.sendAt === undefined ? undefined : scheduledInstantOf(input.sendAt, now);
  const at = requested ?? now;
  const allowed = await instantUnderQuietHours(input, at, policy);
  return allowed.getTime() === at.getTime() ? requested : allowed;
}

/** A scheduled text waits for the firing (./scheduled-texts.ts); any other goes to the carrier now. */
async function sendNowOrLater(
  message: Message,
  segments: number,
  carrier: Carrier,
  request: ChangeRequest | null,
): Promise<SendResult> {
  if (message.status === 'scheduled') {
    metrics.addMetric('TextsScheduled', MetricUnit.Count, 1);
    return { message, replayed: false };
  }
  const handedOver = await handOver(message, carrier, request);
  metrics.addMetric('TextsSent', MetricUnit.Count, 1);
  metrics.addMetric('TextSegmentsBilled', MetricUnit.Count, segments);
  return { message: handedOver, replayed: false };
}

/** The text as it is stored: `queued` to go now, `scheduled` with its `sendAt`; and what it costs. */
function newOutboundText(
  tenantId: string,
  tenantRow: Item,
  input: SendMessageInput,
  now: Date,
  sendAt: Date | undefined,
): { message: Message; segments: number; costCents: number } {
  const tenant = tenantFromItem(tenantRow);
  if (!tenant.smsNumber) throw new NoSmsNumberError();
  const { segments } = segmentsOf(input.body);
  const message: Message = {
    id: uuidv7(now),
    tenantId,
    direction: 'outbound',
    fromNumber: tenant.smsNumber,
    toNumber: input.to,
    counterpartNumber: input.to,
    body: input.body,
    status: sendAt ? 'scheduled' : 'queued',
    messageSid: '', // the carrier names it; see recordMessageSid
    agentId: null, // sent through the API: no agent
    isRead: true,
    createdAt: now.toISOString(),
    ...(sendAt && { sendAt: sendAt.toISOString() }),
    ...(input.category && { category: input.category }),
  };
  return { message, segments, costCents: segments * smsRateCentsOf(tenantRow) };
}

/**
 * One transaction: the consent check, the charge (./spend.ts decides which shard, and what a
 * refusal means), the Idempotency-Key, the message and its thread (and a scheduled text's row
 * under its number, for a STOP to find). Returns the key a concurrent retry won, if one did.
 */
async function storeCharged(
  message: Message,
  { thread, ...cost }: { segments: number; costCents: number; thread: Item | undefined },
  policy: SpendPolicy,
  key: { idempotencyKey: string; requestHash: string } | undefined,
  now: Date,
): Promise<SendKey | undefined> {
  const { tenantId } = message;
  // The thread as the send read it serves the first store only; a later charge round's store reads it afresh.
  let threadRead: { row: Item | undefined } | undefined = { row: thread };
  return chargeWithin(tenantId, policy, cost.costCents, async (charge): Promise<ChargeAttempt<SendKey | undefined>> => {
    const alongside = {
      consent: notOptedOutCheck(tenantId, message.toNumber),
      charge: charge.item,
      sendKey: key
        ? sendKeyPut(tenantId, key.idempotencyKey, { messageId: message.id, requestHash: key.requestHash }, now)
        : undefined,
      scheduledTo: message.status === 'scheduled' ? scheduledToPut(message) : undefined,
    };
    const stored = await storeMessage(message, {
      charge: { ...cost, spendShard: charge.shard },
      alongside,
      threadRead,
    });
    threadRead = undefined;
    if (stored.stored) return { charged: undefined };
    if (!('refused' in stored)) throw new Error(`sendMessage: message ${message.id} collided with another`);
    const keyTaken = stored.refused.failed('sendKey');
    const concurrentRetry = sendKeyOf(keyTaken?.item, now);
    if (concurrentRetry) return { charged: concurrentRetry }; // a concurrent retry won the key
    if (stored.refused.failed('consent')) throw new RecipientOptedOutError();
    // The key's row changed between our condition and its answer (expired and taken over): look again.
    if (keyTaken) return LOST_RACE;
    return { chargeRefused: stored.refused.failed('charge')?.item };
  });
}

/**
 * A repeated Idempotency-Key: the message the key names, as it now stands; a send the carrier
 * refused or never got answers with that outcome again. Never the carrier.
 */
async function replay(tenantId: string, key: SendKey, requestHash: string): Promise<SendResult> {
  if (key.requestHash !== requestHash) throw new IdempotencyMismatchError();
  const row = await getMessageItem(tenantId, key.messageId);
  const message = fromItem(row);
  if (message.status === 'failed') {
    const { reason, carrierCode } = failureOf(row);
    if (reason === 'carrier_rejected') throw new CarrierRejectedError(message.id, carrierCode, REPLAYED);
    if (reason === 'recipient_opted_out') throw new RecipientOptedOutError(message.id, REPLAYED);
    if (reason === 'carrier_unavailable') throw new CarrierUnavailableError(REPLAYED);
  }
  return { message, replayed: true };
}
