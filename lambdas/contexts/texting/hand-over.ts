import { logger, metrics, MetricUnit } from '../../shared/aws';
import { retryWhileBusy } from '../../shared/table/contention';
import type { ChangeRequest } from '../../shared/table/row-types';
import { recordConsentChange } from '../contacts/consent-copies';
import { CarrierError, type Carrier, type CarrierErrorDetails } from './carrier-port';
import { recordMessageSid, updateMessageStatus, type StatusChangeOptions } from './delivery-status';
import { CarrierRejectedError, CarrierUnavailableError, RecipientOptedOutError } from './errors';
import { cancelScheduledTextsTo } from './scheduled-changes';
import type { Message } from './schemas';
import { CARRIER_OPT_OUT_SOURCE } from '../consent/sources';

/**
 * The carrier's turn, once per stored `queued` text: a send at once (./sending.ts) and a scheduled
 * text when it fires (./scheduled-texts.ts) hand over alike. Returns the message as it stands, or
 * throws the outcome:
 *   accepted   the sid is recorded; the message with it
 *   unknown    (timeout, reset, 5xx) the text may be on its way: it stays queued and charged; its
 *              status callback or the settlement sweep settles it
 *   refused    failed and refunded in one transaction; 422 carrier_rejected (or 409 when the
 *              carrier says the recipient opted out, which the consent ledger then records)
 *   not sent   (nothing reached the carrier) failed and refunded; 502 carrier_unavailable
 * Never log a body.
 */
export async function handOver(
  message: Message,
  carrier: Carrier,
  request: ChangeRequest | null = null,
): Promise<Message> {
  let messageSid: string;
  try {
    ({ messageSid } = await carrier.send({
      tenantId: message.tenantId,
      messageId: message.id,
      from: message.fromNumber,
      to: message.toNumber,
      body: message.body,
    }));
  } catch (err) {
    const failure = err instanceof CarrierError ? err.details : undefined;
    const log = { messageId: message.id, carrier: carrier.name, outcome: failure?.kind ?? 'unknown' };
    if (!failure || failure.kind === 'unknown') {
      // The carrier may have the text: no refund, no failure, no "safe to retry".
      logger.warn('The carrier outcome of a text is unknown; it stays queued until the carrier says', {
        ...log,
        error: (err as Error).message,
      });
      metrics.addMetric('TextsOutcomeUnknown', MetricUnit.Count, 1);
      return message;
    }
    logger.warn('The carrier did not take a text', { ...log, error: (err as Error).message });
    return refused(message, failure, request);
  }
  try {
    await recordMessageSid(message.tenantId, message.id, messageSid, message);
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
 * A definite refusal: the text failed and refunded, and its error thrown; the message when that could not be recorded.
 * The failure is the answer to the send's request (`request`, none when the firing sent it), which message.failed
 * names; the opt-out a refusal reveals is the carrier's news, recorded as the carrier's (no request).
 */
async function refused(
  message: Message,
  failure: CarrierErrorDetails,
  request: ChangeRequest | null,
): Promise<Message> {
  // The carrier's answer is its report of the text's fate: kept with the failure (message.failed).
  const report = {
    reportedAt: new Date(),
    carrierCode: failure.providerCode,
    carrierMessage: failure.providerMessage,
    request,
  };
  if (failure.kind === 'not_sent') {
    // The key stays with this failed text, like every outcome: a key is one carrier request.
    if (await failQuietly(message, { failureReason: 'carrier_unavailable', request }))
      throw new CarrierUnavailableError();
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

/**
 * Attempts at recording a carrier's opt-out while the number's rows stay busy (contention that outlasted the client's
 * own retries): more than for anything else, since every send until it lands would reach the carrier.
 */
const OPT_OUT_ATTEMPTS = 5;

async function recordCarrierOptOut(message: Message, providerCode: number | undefined): Promise<void> {
  const change = {
    status: 'opted_out' as const,
    source: CARRIER_OPT_OUT_SOURCE,
    at: new Date(),
    note: `Carrier refused a send (error ${providerCode})`,
  };
  try {
    await retryWhileBusy(OPT_OUT_ATTEMPTS, () => recordConsentChange(message.tenantId, message.toNumber, change));
    // An opt-out cancels what is scheduled to the number at once (the firing would cancel each at its time anyway).
    await cancelScheduledTextsTo(message.tenantId, message.toNumber, 'opted_out');
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
