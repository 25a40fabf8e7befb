import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, metrics, MetricUnit, TABLE_NAME } from '../../shared/aws';
import { ValidationError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { isE164 } from '../../shared/phone';
import { ensureContactForNumber } from '../contacts/contacts';
import { fromItem as tenantFromItem, tenantKey } from '../tenants/tenants';
import { chargeForText, refundText, segmentsOf, smsRateCentsOf } from './billing';
import { CarrierError, type Carrier } from './carrier-port';
import { applyConsentKeyword, consentKeywordOf, consentOfNumber, type ConsentKeyword } from './consent';
import { CarrierUnavailableError, NoSmsNumberError, RecipientOptedOutError } from './errors';
import { getMessage, recordMessageSid, storeMessage, updateMessageStatus } from './messages';
import type { Message, SendMessageInput } from './schemas';

/**
 * The two ways a text enters the service: sent by the organization (POST /messages) and received
 * from the carrier (its callback, or the operator's `simulate sms`). Never log a body.
 */

/**
 * POST /messages, in the order of design section 5: SMS number (409) -> recipient consent (409)
 * -> charge (402: status and limit in one conditional update) -> message `queued` + thread in one
 * transaction -> carrier -> sid. A carrier failure refunds the charge, marks the message failed
 * and answers 502, so a retry neither pays twice nor leaves a phantom `queued` message.
 */
export async function sendMessage(tenantId: string, input: SendMessageInput, carrier: Carrier, now = new Date()): Promise<Message> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId) }));
  if (!Item) throw new Error('sendMessage: the organization row is missing');
  const tenant = tenantFromItem(Item);
  if (!tenant.smsNumber) throw new NoSmsNumberError();
  if ((await consentOfNumber(tenantId, input.to)) === 'opted_out') throw new RecipientOptedOutError();

  const { segments } = segmentsOf(input.body);
  const costCents = segments * smsRateCentsOf(Item);
  await chargeForText(tenantId, costCents, tenant);

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
  try {
    await storeMessage(message, { segments, costCents });
  } catch (err) {
    await refundQuietly(tenantId, message.id, costCents);
    throw err;
  }

  let messageSid: string;
  try {
    ({ messageSid } = await carrier.send({ tenantId, messageId: message.id, from: message.fromNumber, to: message.toNumber, body: message.body }));
  } catch (err) {
    logger.warn('The carrier did not accept a text', { messageId: message.id, carrier: carrier.name, error: (err as Error).message });
    await refundQuietly(tenantId, message.id, costCents);
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed').catch((statusErr: Error) =>
      logger.error('Could not mark an unsent text failed', { messageId: message.id, error: statusErr.message }),
    );
    if (err instanceof CarrierError) throw new CarrierUnavailableError();
    throw err;
  }

  try {
    await recordMessageSid(message, messageSid);
  } catch (err) {
    // The text is with the carrier and billed: failing the request now would invite a retry that
    // sends it twice. Answer with the sid; only the sid lookup for status callbacks is missing.
    logger.error('Could not record the carrier sid of a sent text', { messageId: message.id, messageSid, error: (err as Error).message });
  }
  metrics.addMetric('TextsSent', MetricUnit.Count, 1);
  metrics.addMetric('TextSegmentsBilled', MetricUnit.Count, segments);
  return { ...message, messageSid };
}

/** A refund that fails must not hide why the send failed; it is logged for the operator to settle. */
async function refundQuietly(tenantId: string, messageId: string, costCents: number): Promise<void> {
  try {
    await refundText(tenantId, costCents);
  } catch (err) {
    logger.error('Could not refund an unsent text', { tenantId, messageId, costCents, error: (err as Error).message });
  }
}

export type InboundText = {
  from: string;
  to: string;
  body: string;
  messageSid: string;
  receivedAt: Date;
};

export type InboundResult = {
  message: Message;
  /** True when this sid was already stored (a carrier retry): nothing new was written. */
  duplicate: boolean;
  /** The contact of the sender, auto-created (`auto_inbound`) when the number was new. */
  contactId: string;
  /** The consent keyword the body was, if any (applied to the contact). */
  consent: ConsentKeyword | null;
};

/**
 * An inbound text: stored as `received` and unread with its thread, the sender gets a contact,
 * and a body that is exactly a consent keyword (STOP, START...) sets the contact's consent.
 * Idempotent per carrier sid, so the carrier's retries and the CLI can call it freely.
 */
export async function receiveInboundMessage(tenantId: string, text: InboundText): Promise<InboundResult> {
  if (!isE164(text.from)) throw new ValidationError('from: must be an E.164 phone number');
  if (!text.messageSid) throw new ValidationError('messageSid: is required');
  const contactId = await ensureContactForNumber(tenantId, text.from, 'auto_inbound', text.receivedAt);
  const received: Message = {
    id: uuidv7(text.receivedAt),
    tenantId,
    direction: 'inbound',
    fromNumber: text.from,
    toNumber: text.to,
    counterpartNumber: text.from,
    body: text.body,
    status: 'received',
    messageSid: text.messageSid,
    agentId: null,
    isRead: false,
    createdAt: text.receivedAt.toISOString(),
  };
  const stored = await storeMessage(received);
  const message = stored.stored ? received : await getMessage(tenantId, stored.duplicateOf);
  // Applied on duplicates too: if the first delivery stored the text but failed before this, the
  // retry completes it. The consentAt guard makes applying it twice harmless.
  const consent = consentKeywordOf(message.body);
  if (consent) await applyConsentKeyword(tenantId, contactId, consent, new Date(message.createdAt));
  return { message, duplicate: !stored.stored, contactId, consent };
}
