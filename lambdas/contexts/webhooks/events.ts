import { num, str, type Item } from '../../shared/table/dynamo';
import { PREFIX } from '../../shared/table/keys';
import { rowSequenceOf } from '../../shared/table/row-sequence';
import { CHANGE_REQUEST, CHANGED_AT, ROW_TYPES, type ChangeRequest } from '../../shared/table/row-types';
import { TERMINAL_CALL_STATUSES } from '../calls/call-statuses';
import { fromItem as callFromItem } from '../calls/calls';
import { fromItem as consentFromItem, HOLDER_ATTRIBUTES } from '../consent/ledger';
import { fromItem as contactFromItem } from '../contacts/contact-rows';
import { outcomeFactsOf } from '../texting/outcome-facts';
import { costCentsOfItem, fromItem as messageFromItem } from '../texting/messages';
import type { WebhookConsent, WebhookVoicemail } from './event-schemas';
import { CANCELED_MESSAGE_STATUS, FINAL_MESSAGE_STATUSES, type WebhookEventType } from './event-types';
import { derivedUuid } from './internal/derived-ids';
import type { StreamChange } from './stream-change';

/**
 * Which row changes are events. Pure functions over stream changes: no reads, no clock, so a
 * replayed record derives byte-for-byte the same event (same id, same body).
 */
export type DerivedEvent = {
  id: string;
  tenantId: string;
  type: WebhookEventType;
  createdAt: string;
  /** The exact bytes every delivery of this event sends and signs. */
  body: string;
};

const isTerminal = (status: unknown): boolean =>
  typeof status === 'string' && (TERMINAL_CALL_STATUSES as readonly string[]).includes(status);

const isFinalMessageStatus = (status: unknown): status is (typeof FINAL_MESSAGE_STATUSES)[number] =>
  typeof status === 'string' && (FINAL_MESSAGE_STATUSES as readonly string[]).includes(status);

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * message.delivered or message.failed: the one write that moves a stored outbound text into a final
 * status. Statuses only move forward and each move is a write guarded on the status it leaves, so
 * exactly one stream record of a text goes from non-final to final, however its callbacks arrive.
 */
function finalStatusEvent(newImage: Item): { type: WebhookEventType; data: Record<string, unknown> } {
  const message = messageFromItem(newImage);
  const facts = outcomeFactsOf(newImage);
  const common = {
    messageId: message.id,
    counterpartNumber: message.counterpartNumber,
    carrierReportedAt: isoOrNull(facts.carrierReportedAtMs),
  };
  if (message.status === 'delivered')
    return { type: 'message.delivered', data: { ...common, status: 'delivered', message } };
  return {
    type: 'message.failed',
    data: {
      ...common,
      status: 'failed',
      reason: facts.failureReason,
      carrierErrorCode: facts.carrierCode,
      carrierErrorMessage: facts.carrierMessage,
      refunded: facts.refundedCents > 0,
      refundedCents: facts.refundedCents,
      message,
    },
  };
}

/** message.canceled: its reason and the reserved cost given back in the same write. */
function canceledEvent(newImage: Item): { type: WebhookEventType; data: Record<string, unknown> } {
  const message = messageFromItem(newImage);
  return {
    type: 'message.canceled',
    data: {
      messageId: message.id,
      counterpartNumber: message.counterpartNumber,
      status: 'canceled',
      reason: message.cancelReason ?? 'api',
      refundedCents: costCentsOfItem(newImage),
      message,
    },
  };
}

/** The tenant of a row: its `tenantId`, or the `T#<id>` its key starts with. */
function tenantOf(item: Item): string | undefined {
  if (typeof item.tenantId === 'string') return item.tenantId;
  const pk = typeof item.pk === 'string' ? item.pk : '';
  return pk.startsWith(PREFIX.tenant) ? pk.slice(PREFIX.tenant.length).split('#')[0] : undefined;
}

function voicemailFromItem(item: Item): WebhookVoicemail {
  return {
    id: item.id as string,
    callId: str(item.callId),
    fromNumber: item.fromNumber as string,
    toNumber: item.toNumber as string,
    durationSec: num(item.durationSec),
    transcript: str(item.transcript),
    createdAt: item.createdAt as string,
  };
}

/**
 * A number's consent as consent.changed carries it. Only a recorded change has a status other than
 * `unknown` and a time (consent/ledger.ts writes both with every change).
 */
function consentOfRow(item: Item): WebhookConsent {
  const consent = consentFromItem(item);
  return {
    number: item.number as string,
    status: consent.status as WebhookConsent['status'],
    source: consent.source ?? 'unknown',
    at: consent.at as string,
    note: consent.note,
  };
}

/**
 * The API request a row's change came from, as the write recorded it beside the change (contacts/contact-rows.ts,
 * consent/ledger.ts, texting's status moves and cancels: every write that raises an event names its request or
 * removes the last one); null for the carrier's and the system's changes, and for rows no request writes (calls,
 * voicemails, inbound texts). Like Stripe's, only the event a request itself caused names it: a text's later
 * status from the carrier names none, not the send that created it.
 */
function requestOf(item: Item): ChangeRequest | null {
  const id = item[CHANGE_REQUEST.id];
  if (typeof id !== 'string') return null;
  return { id, idempotencyKey: str(item[CHANGE_REQUEST.idempotencyKey]) };
}

/** Fields every change of a contact's own fields moves: an event says them in `contact`, not as changes. */
const BOOKKEEPING = new Set(['updatedAt', 'version']);

/**
 * contact.updated's `previousAttributes`: each field the change gave another value, with its value before; for
 * custom fields, each key changed with its value before (null: the key was absent).
 */
function previousAttributesOf(oldImage: Item | undefined, newImage: Item): Record<string, unknown> {
  if (!oldImage) return {};
  const before = contactFromItem(oldImage) as Record<string, unknown>;
  const after = contactFromItem(newImage) as Record<string, unknown>;
  const previous: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(before)) {
    if (BOOKKEEPING.has(field) || field === 'customFields') continue;
    if (value !== after[field]) previous[field] = value;
  }
  const [was, now] = [
    (before.customFields ?? {}) as Record<string, string>,
    (after.customFields ?? {}) as Record<string, string>,
  ];
  const changedKeys = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((key) => was[key] !== now[key]);
  if (changedKeys.length > 0)
    previous.customFields = Object.fromEntries(changedKeys.map((key) => [key, was[key] ?? null]));
  return previous;
}

/** consent.changed: the number's new consent, what it was, and the contact holding the number when it changed. */
function consentChangedData(newImage: Item, oldImage: Item | undefined): Record<string, unknown> {
  const holder = typeof newImage[HOLDER_ATTRIBUTES.contactId] === 'string';
  return {
    consent: consentOfRow(newImage),
    previousStatus: (oldImage?.consentStatus as string | undefined) ?? 'unknown',
    contactId: holder ? newImage[HOLDER_ATTRIBUTES.contactId] : null,
    externalId: holder ? str(newImage[HOLDER_ATTRIBUTES.externalId]) : null,
    version: holder ? num(newImage[HOLDER_ATTRIBUTES.version]) : null,
  };
}

/** contact.deleted: what the tombstone keeps of the contact. */
const deletedContactOf = (item: Item) => ({
  id: item.id as string,
  deletedAt: item.deletedAt as string,
  externalId: str(item.externalId),
  phoneNumber: str(item.phoneNumber),
  version: rowSequenceOf(item) || 1,
});

/**
 * A ledger change records a new decision (a status or a time); a replay of the same one writes the same row again and
 * is no event.
 */
const consentChanged = (newImage: Item, oldImage: Item | undefined): boolean =>
  newImage.consentStatus !== oldImage?.consentStatus || newImage.consentAt !== oldImage?.consentAt;

type Classified = { type: WebhookEventType; data: Record<string, unknown> };

/** The event type and `data` of a change, or undefined when the change is no event. */
function classify(change: StreamChange): Classified | undefined {
  const { newImage, eventName } = change;
  if (!newImage || eventName === 'REMOVE') return undefined;
  switch (newImage.type) {
    case ROW_TYPES.contact:
    case ROW_TYPES.contactTombstone:
    case ROW_TYPES.consent:
      return classifyDirectory(change);
    default:
      return classifyActivity(change);
  }
}

/** contact.* and consent.changed. */
function classifyDirectory(change: StreamChange): Classified | undefined {
  const { oldImage, eventName } = change;
  const newImage = change.newImage as Item;
  switch (newImage.type) {
    case ROW_TYPES.contact:
      if (eventName === 'INSERT') return { type: 'contact.created', data: { contact: contactFromItem(newImage) } };
      // A write of the contact's own fields stamps CHANGED_AT; a copy of its number's consent does not (consent.changed
      // says it).
      if (newImage[CHANGED_AT] !== oldImage?.[CHANGED_AT])
        return {
          type: 'contact.updated',
          data: { contact: contactFromItem(newImage), previousAttributes: previousAttributesOf(oldImage, newImage) },
        };
      return undefined;
    case ROW_TYPES.contactTombstone:
      return eventName === 'INSERT'
        ? { type: 'contact.deleted', data: { contact: deletedContactOf(newImage) } }
        : undefined;
    default:
      return consentChanged(newImage, oldImage)
        ? { type: 'consent.changed', data: consentChangedData(newImage, oldImage) }
        : undefined;
  }
}

/** Calls, texts and voicemails. */
function classifyActivity(change: StreamChange): Classified | undefined {
  const { newImage, oldImage, eventName } = change;
  if (!newImage || eventName === 'REMOVE') return undefined;
  switch (newImage.type) {
    case ROW_TYPES.call:
      // Terminal on insert, or non-terminal -> terminal; a later edit of an ended call is no new event.
      if (isTerminal(newImage.status) && (eventName === 'INSERT' || !isTerminal(oldImage?.status))) {
        return { type: 'call.completed', data: { call: callFromItem(newImage) } };
      }
      return undefined;
    case ROW_TYPES.message:
      if (eventName === 'INSERT' && newImage.direction === 'inbound') {
        return { type: 'sms.received', data: { message: messageFromItem(newImage) } };
      }
      // Read from the row's attributes, never its key: the key's layout is the texting context's to change.
      // Only a change of a stored text: a text is stored queued, so its final status is always a change.
      if (
        eventName === 'MODIFY' &&
        newImage.direction === 'outbound' &&
        isFinalMessageStatus(newImage.status) &&
        !isFinalMessageStatus(oldImage?.status)
      ) {
        return finalStatusEvent(newImage);
      }
      // A scheduled text canceled: the one write that moves it from `scheduled` to `canceled`.
      if (
        eventName === 'MODIFY' &&
        newImage.direction === 'outbound' &&
        newImage.status === CANCELED_MESSAGE_STATUS &&
        oldImage?.status !== CANCELED_MESSAGE_STATUS
      ) {
        return canceledEvent(newImage);
      }
      return undefined;
    case ROW_TYPES.voicemail:
      if (newImage.recordingReady === true && (eventName === 'INSERT' || oldImage?.recordingReady !== true)) {
        return { type: 'voicemail.received', data: { voicemail: voicemailFromItem(newImage) } };
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * When the change happened: the millisecond the domain wrote into the row with it (CHANGED_AT),
 * else (a row without it) the stream record's approximate time.
 */
function changeTimeMs(change: StreamChange): number {
  const written = change.newImage?.[CHANGED_AT];
  return typeof written === 'number' && Number.isSafeInteger(written) && written >= 0
    ? written
    : change.approximateCreationMs;
}

/** The event a row change raises, if any. */
export function deriveEvent(change: StreamChange): DerivedEvent | undefined {
  const classified = classify(change);
  const tenantId = change.newImage && tenantOf(change.newImage);
  if (!classified || !tenantId) return undefined;
  const at = changeTimeMs(change);
  const id = derivedUuid(at, 'event', change.eventId);
  const createdAt = new Date(at).toISOString();
  const body = JSON.stringify({
    id,
    type: classified.type,
    createdAt,
    sequence: rowSequenceOf(change.newImage),
    data: classified.data,
    request: requestOf(change.newImage!),
  });
  return { id, tenantId, type: classified.type, createdAt, body };
}
