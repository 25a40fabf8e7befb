import { ValidationError } from '../../shared/errors';
import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { uuidv7 } from '../../shared/ids';
import { isE164 } from '../../shared/phone';
import type { ConsentChange } from '../consent/ledger';
import { consentChangeIsStale, consentChangeWrites } from '../contacts/consent-copies';
import { ensureContactForNumber } from '../contacts/contacts';
import { consentChangeOf, consentKeywordOf, type ConsentKeyword } from './consent-keywords';
import { getMessage, storeMessage, type StoreResult } from './messages';
import { cancelScheduledWhileOptedOut } from './scheduled-changes';
import type { Message } from './schemas';

/**
 * A text received from the carrier (its callback, or the operator's `simulate sms`); sending is
 * ./sending.ts. Never log a body.
 */

export type InboundText = {
  from: string;
  to: string;
  body: string;
  messageSid: string;
  /** The carrier's time of the text: orders consent keywords (the later wins). */
  receivedAt: Date;
  /** Twilio's `OptOutType` (Advanced Opt-Out: STOP, START, HELP), when it sent one. */
  optOutType?: string;
};

export type InboundResult = {
  message: Message;
  /** True when this sid was already stored (a carrier retry): nothing new was written. */
  duplicate: boolean;
  /** The contact of the sender, auto-created (`auto_inbound`) when the number was new. */
  contactId: string;
  /** The consent keyword the body was, if any (recorded in the number's consent ledger). */
  consent: ConsentKeyword | null;
};

/**
 * An inbound text: stored as `received` and unread with its thread, the sender gets a contact,
 * and a body that is a consent keyword (STOP, START...) sets the number's consent in the ledger
 * in the same transaction as the message, before anything else: there is never a stored STOP whose
 * opt-out is missing, and a contact store that fails on every retry cannot keep an opt-out out.
 * Idempotent per carrier sid, so the carrier's retries and the CLI can call it freely; a keyword
 * older than the ledger's latest change is stored as a message and changes no consent.
 */
export async function receiveInboundMessage(tenantId: string, text: InboundText): Promise<InboundResult> {
  if (!isE164(text.from)) throw new ValidationError('from: must be an E.164 phone number');
  if (!text.messageSid) throw new ValidationError('messageSid: is required');
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
  const consent = consentKeywordOf(text.body, text.optOutType);
  // The message and its consent change first: the opt-out lands even if the contact below cannot be made
  // (a contact made later copies the ledger as it then stands).
  const stored = consent
    ? await storeWithConsentChange(received, consentChangeOf(consent, text.receivedAt))
    : await storeMessage(received);
  if ('refused' in stored) throw new Error(`receiveInboundMessage: could not store message ${received.id}`);
  // A STOP cancels what is scheduled to the number at once; a carrier retry of it cancels again (the first
  // delivery may have stopped half way).
  if (consent?.status === 'opted_out') await cancelScheduledWhileOptedOut(tenantId, text.from);
  // Also on a duplicate: the carrier's retry of a text whose contact could not be made makes it now.
  const contactId = await ensureContactForNumber(tenantId, text.from, 'auto_inbound', text.receivedAt);
  if (stored.stored) return { message: received, duplicate: false, contactId, consent };
  return { message: await getMessage(tenantId, stored.duplicateOf), duplicate: true, contactId, consent };
}

/**
 * A keyword's message, stored with the consent change it is (the ledger and the number's holder's
 * copy: contacts/consent-copies.ts) in one transaction. When the number moved to another contact
 * in between, the change is written again for the new holder; when a later change is on record,
 * the keyword is history and the message is stored alone.
 */
async function storeWithConsentChange(received: Message, change: ConsentChange): Promise<StoreResult> {
  return optimisticRounds(KEYWORD_ROUNDS, async () => {
    const stored = await storeMessage(received, {
      alongside: await consentChangeWrites(received.tenantId, received.fromNumber, change),
    });
    if (stored.stored || !('refused' in stored)) return stored;
    return consentChangeIsStale(stored.refused) ? storeMessage(received) : LOST_RACE;
  });
}

/** Rounds of writing a keyword's consent change again for the number's new holder. */
const KEYWORD_ROUNDS = {
  what: 'store a keyword: its number kept moving between contacts',
  rounds: 4,
  site: 'texting.keyword',
};
