import { logger, metrics, MetricUnit } from '../../shared/aws';
import { IDEMPOTENT_REPLAYED_HEADER, IdempotencyMismatchError, TemporarilyUnavailableError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { isContention } from '../../shared/table/contention';
import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { notOptedOutCheck } from '../consent/ledger';
import { recordConsentChange } from '../contacts/consent-copies';
import { policyOf, readOrganizationRow } from '../tenants/billing-policy';
import { fromItem as tenantFromItem } from '../tenants/tenants';
import { segmentsOf, smsRateCentsOf } from './billing';
import { CarrierError, type Carrier } from './carrier-port';
import { failureOf, recordMessageSid, updateMessageStatus, type StatusChangeOptions } from './delivery-status';
import { CarrierRejectedError, CarrierUnavailableError, NoSmsNumberError, RecipientOptedOutError } from './errors';
import { fromItem, getMessageItem, storeMessage } from './messages';
import { chargeWithin, type ChargeAttempt } from './spend';
import type { Message, SendMessageInput } from './schemas';
import { findSendKey, requestHashOf, sendKeyOf, sendKeyPut, type SendKey } from './send-keys';

/**
 * POST /messages, designed like a payment: SMS number (409) -> one transaction that checks the
 * number's consent (409), charges the organization (402), stores the `queued` message and its
 * thread and claims the Idempotency-Key -> the carrier, at most once per key -> its outcome:
 *   accepted   the sid is recorded; 201 with the message
 *   unknown    (timeout, reset, 5xx) the text may be on its way: it stays queued and charged, 201
 *              with the message as it stands; its status callback or the settlement sweep settles it
 *   refused    failed and refunded in one transaction; 422 carrier_rejected (or 409 when the
 *              carrier says the recipient opted out, which the consent ledger then records)
 *   not sent   (nothing reached the carrier) failed and refunded; 502, and only then "safe to
 *              retry" (with a new key: a key, like Stripe's, keeps its first outcome)
 * Never log a body.
 */
export type SendOptions = { idempotencyKey?: string; now?: Date };
export type SendResult = { message: Message; replayed: boolean };

const REPLAYED = { [IDEMPOTENT_REPLAYED_HEADER]: 'true' };

export async function sendMessage(
  tenantId: string,
  input: SendMessageInput,
  carrier: Carrier,
  options: SendOptions = {},
): Promise<SendResult> {
  const now = options.now ?? new Date();
  const { idempotencyKey } = options;
  const requestHash = requestHashOf(input);
  if (idempotencyKey) {
    const earlier = await findSendKey(tenantId, idempotencyKey, now);
    if (earlier) return replay(tenantId, earlier, requestHash);
  }

  // Strongly consistent: a billing block or a lowered limit bites from the first send after it.
  const tenantRow = await readOrganizationRow(tenantId);
  const tenant = tenantFromItem(tenantRow);
  if (!tenant.smsNumber) throw new NoSmsNumberError();

  const { segments } = segmentsOf(input.body);
  const costCents = segments * smsRateCentsOf(tenantRow);
  const message: Message = {
    id: uuidv7(now),
    tenantId,
    direction: 'outbound',
    fromNumber: tenant.smsNumber,
    toNumber: input.to,
    counterpartNumber: input.to,
    body: input.body,
    status: 'queued',
    messageSid: '', // the carrier names it; see recordMessageSid
    agentId: null, // sent through the API: no agent
    isRead: true,
    createdAt: now.toISOString(),
  };

  // One transaction: the consent check, the charge (./spend.ts decides which shard, and what a
  // refusal means), the Idempotency-Key, the queued message and its thread.
  const earlier = await chargeWithin(
    tenantId,
    policyOf(tenantRow),
    costCents,
    async (charge): Promise<ChargeAttempt<SendKey | undefined>> => {
      const alongside = {
        consent: notOptedOutCheck(tenantId, input.to),
        charge: charge.item,
        sendKey: idempotencyKey
          ? sendKeyPut(tenantId, idempotencyKey, { messageId: message.id, requestHash }, now)
          : undefined,
      };
      const stored = await storeMessage(message, {
        charge: { segments, costCents, spendShard: charge.shard },
        alongside,
      });
      if (stored.stored) return { charged: undefined };
      if (!('refused' in stored)) throw new Error(`sendMessage: message ${message.id} collided with another`);
      const keyTaken = stored.refused.failed('sendKey');
      const concurrentRetry = sendKeyOf(keyTaken?.item, now);
      if (concurrentRetry) return { charged: concurrentRetry }; // a concurrent retry won the key
      if (stored.refused.failed('consent')) throw new RecipientOptedOutError();
      // The key's row changed between our condition and its answer (expired and taken over): look again.
      if (keyTaken) return LOST_RACE;
      return { chargeRefused: stored.refused.failed('charge')?.item };
    },
  );
  if (earlier) return replay(tenantId, earlier, requestHash);

  const handedOver = await handOver(message, carrier);
  metrics.addMetric('TextsSent', MetricUnit.Count, 1);
  metrics.addMetric('TextSegmentsBilled', MetricUnit.Count, segments);
  return { message: handedOver, replayed: false };
}

/** The carrier's turn, once per stored message. Returns the message as it stands, or throws the outcome. */
async function handOver(message: Message, carrier: Carrier): Promise<Message> {
  const { tenantId } = message;
  let messageSid: string;
  try {
    ({ messageSid } = await carrier.send({
      tenantId,
      messageId: message.id,
      from: message.fromNumber,
      to: message.toNumber,
      body: message.body,
    }));
  } catch (err) {
    const failure = err instanceof CarrierError ? err.details : undefined;
    const log = {
      messageId: message.id,
      carrier: carrier.name,
      outcome: failure?.kind ?? 'unknown',
      error: (err as Error).message,
    };
    if (!failure || failure.kind === 'unknown') {
      // The carrier may have the text: no refund, no failure, no "safe to retry".
      logger.warn('The carrier outcome of a text is unknown; it stays queued until the carrier says', log);
      metrics.addMetric('TextsOutcomeUnknown', MetricUnit.Count, 1);
      return message;
    }
    logger.warn('The carrier did not take a text', log);
    // The carrier's answer is its report of the text's fate: kept with the failure (message.failed).
    const report = {
      reportedAt: new Date(),
      carrierCode: failure.providerCode,
      carrierMessage: failure.providerMessage,
    };
    if (failure.kind === 'not_sent') {
      // The key stays with this failed text, like every outcome: a key is one carrier request.
      if (await failQuietly(message, { failureReason: 'carrier_unavailable' })) throw new CarrierUnavailableError();
      return message; // could not record it: still queued, and the sweep settles it
    }
    if (failure.recipientOptedOut) {
      // The carrier knows of an opt-out the ledger did not (a STOP we never received): record it,
      // trying harder than for anything else, since every send until then would reach the carrier.
      await recordCarrierOptOut(message, failure.providerCode);
      if (await failQuietly(message, { failureReason: 'recipient_opted_out', ...report }))
        throw new RecipientOptedOutError(message.id);
      return message;
    }
    if (await failQuietly(message, { failureReason: 'carrier_rejected', ...report })) {
      throw new CarrierRejectedError(message.id, failure.providerCode ?? null);
    }
    return message;
  }

  try {
    await recordMessageSid(tenantId, message.id, messageSid);
  } catch (err) {
    // The text is with the carrier and billed: failing the request now would invite a retry that
    // sends it twice. Its status callback names the message and records the sid.
    logger.error('Could not record the carrier sid of a sent text', {
      messageId: message.id,
      messageSid,
      error: (err as Error).message,
    });
  }
  return { ...message, messageSid };
}

/**
 * Rounds of recording a carrier's opt-out while the number's rows stay busy (contention that
 * outlasted the client's retries, a holder that kept moving): more than for anything else, since
 * every send until it is recorded would reach the carrier.
 */
const OPT_OUT_ROUNDS = { what: 'record a carrier opt-out', rounds: 5 };

async function recordCarrierOptOut(message: Message, providerCode: number | undefined): Promise<void> {
  const change = {
    status: 'opted_out' as const,
    source: 'carrier_opt_out',
    at: new Date(),
    note: `Carrier refused a send (error ${providerCode})`,
  };
  try {
    await optimisticRounds(OPT_OUT_ROUNDS, async (round) => {
      try {
        return await recordConsentChange(message.tenantId, message.toNumber, change);
      } catch (err) {
        if (!isContention(err) && !(err instanceof TemporarilyUnavailableError)) throw err;
        await new Promise((resolve) => setTimeout(resolve, 40 * 2 ** round));
        return LOST_RACE;
      }
    });
  } catch (err) {
    // The text is failed and refunded either way; the next send to the number meets the carrier's refusal again.
    logger.error('Could not record a carrier opt-out', { messageId: message.id, error: (err as Error).message });
  }
}

/**
 * Fails and refunds a text the carrier did not take. False when that could not be recorded (the
 * table failed us): then the text is left queued and charged, and the sweep settles it later.
 */
async function failQuietly(message: Message, options: StatusChangeOptions): Promise<boolean> {
  try {
    const { changed, message: now } = await updateMessageStatus(
      message.tenantId,
      { messageId: message.id },
      'failed',
      options,
    );
    return changed || now.status === 'failed';
  } catch (err) {
    logger.error('Could not fail and refund a text the carrier did not take', {
      messageId: message.id,
      error: (err as Error).message,
    });
    return false;
  }
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
