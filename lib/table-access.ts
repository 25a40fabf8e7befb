import type { RouteId } from '../lambdas/handlers/api/routes';
import type { RouteSpec } from '../lambdas/handlers/http/route-spec';
import type { CarrierRouteId } from '../lambdas/handlers/carrier/routes';
import { PREFIX, tenantScopedPk } from '../lambdas/shared/table/keys';
import type { TableAccess } from './constructs/table';

/**
 * What each function does to the table, and so exactly what it may do. Derived from the DynamoDB
 * commands the code sends (the modules of lambdas/contexts/); the `satisfies` clause makes `tsc` fail when a
 * route is added to the manifest without saying what it needs.
 */
const NONE: TableAccess = { actions: [] };

/** Known rows by key (GetCommand). */
const READ_ROWS: TableAccess = { actions: ['dynamodb:GetItem'] };

/** A page of a list: Query on the base table (all rows of a kind) and on gsi1 (filtered listings). */
const LIST_PAGE: TableAccess = { actions: ['dynamodb:Query'], indexes: ['gsi1'] };

export const ROUTE_TABLE_ACCESS = {
  /** Built from the code alone. */
  getOpenApi: NONE,
  getApiReference: NONE,
  /** Answered from the authorizer's context; no table read. */
  getMe: NONE,
  /** `calls.listCalls`: base table, or gsi1 when filtered by direction. */
  listCalls: LIST_PAGE,
  /** `calls.getCall`. */
  getCall: READ_ROWS,
  /** `contacts.getContact`: the contact (GetItem), which carries its number's consent. */
  getContact: READ_ROWS,
  /**
   * `contacts.listContacts`: the `directory` index (every contact, newest first), or gsi1 (named
   * contacts only) when includeAutoCreated=false; the `changes` index for `updatedSince`, the
   * `externalIds` index for `externalId`. A search queries one partition of the search index and
   * reads its contacts with BatchGetItem.
   */
  listContacts: {
    actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
    indexes: ['gsi1', 'directory', 'changes', 'externalIds'],
  },
  /**
   * `contacts.createContact`: the number's ledger row (GetItem), then a transaction of Puts (the
   * number's and the external id's claims, the contact with its consent copy, its search entries)
   * and the ledger's ConditionCheckItem; adoption reads the contact (GetItem), then a transaction of
   * two Updates (claim + contact) with the changed search entries and external-id claims (Put,
   * Delete), followed by a GetItem of the adopted contact. The Idempotency-Key records
   * (Powertools) are Put, Get, Update and Delete: a failed request (a 409) deletes its record to free the key.
   */
  createContact: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
  },
  /**
   * `contact-batch.upsertContacts`: every item's claims and its number's consent in one read
   * (BatchGetItem), the new contacts several to a transaction (Put, ConditionCheckItem), the
   * others one by one: their claims (GetItem), then a create, an adoption or an update as
   * `createContact` and `updateContact` write them; the Idempotency-Key records as for `createContact`.
   */
  upsertContacts: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
  },
  /**
   * `contacts.updateContact`: GetItem, then an UpdateItem, or a transaction moving the claims of
   * the number and the external id and the changed search entries (Update contact, Delete old
   * claims and entries, Put new ones); a new number brings its ledger row's consent (GetItem, then
   * a ConditionCheckItem in the transaction).
   */
  updateContact: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:PutItem',
      'dynamodb:ConditionCheckItem',
    ],
  },
  /**
   * `contacts.deleteContact`: GetItem, then a transaction deleting contact, claims and search entries and putting its
   * tombstone.
   */
  deleteContact: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'] },
  /**
   * `contact-batch-delete.deleteContacts`: the external ids' claims (BatchGetItem, GetItem when one moved), then each
   * contact as `deleteContact` deletes it; the Idempotency-Key records as for `createContact` (Put, Get, Update,
   * Delete).
   */
  deleteContacts: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
    ],
  },
  /**
   * `threads.listThreads`: one page of the organization's threads on gsi2 (by last activity, keys only), then the
   * threads by key.
   */
  listThreads: { actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'], indexes: ['gsi2'] },
  /** `messages.listMessages`: one conversation on gsi1. */
  listMessages: { actions: ['dynamodb:Query'], indexes: ['gsi1'] },
  /**
   * `sending.sendMessage`: GetItem (Idempotency-Key row, organization, thread, message on a
   * replay); one transaction of ConditionCheckItem (the number's consent), UpdateItem (the charge
   * on a spend shard, thread), PutItem (message, Idempotency-Key row); then the sid (UpdateItem +
   * PutItem of the sid row), or a failure (UpdateItem: message, refund, thread). A shard that
   * refuses the charge has the shards read (BatchGetItem) and, when they are behind the limit or
   * their headroom is out of reach, settled by one writer: the settlement lease on the
   * organization row (UpdateItem, taken and given back; GetItem while another holds it) and one
   * transaction over the shards (UpdateItem, PutItem for missing ones). A carrier opt-out updates the ledger and the
   * holder's copy (UpdateItem,
   * ConditionCheckItem on the number's claim), then cancels the texts scheduled to the number (Query of its
   * rows, a transaction each: UpdateItem of the message and the refund, DeleteItem of the number's row). A
   * scheduled text (`sendAt`) also puts its number's row (PutItem) in the send transaction.
   */
  sendMessage: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:Query',
      'dynamodb:DeleteItem',
    ],
  },
  /** `scheduled-changes.rescheduleMessage`: GetItem (the message), one conditional UpdateItem (time and due list). */
  rescheduleMessage: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  /**
   * `scheduled-changes.cancelScheduledText`: GetItem (the message), one transaction of UpdateItems
   * (message, refund on its spend shard) and DeleteItem (the number's row), then the thread's UpdateItem.
   */
  cancelMessage: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
  /**
   * `consent/history.readConsentRecord`: the number's ledger row (GetItem) and a page of its history (Query), both in
   * the number's own ledger partition, and nothing else.
   */
  getConsent: {
    actions: ['dynamodb:GetItem', 'dynamodb:Query'],
    partitionKeyPatterns: [tenantScopedPk('*', PREFIX.consent.slice(0, -1), '*')],
  },
  /**
   * `consent-records.recordConsent`: the number's claim (GetItem), one transaction of the ledger row and the holder's
   * copy (UpdateItem), the history row (PutItem) and the check on the claim (ConditionCheckItem); on an opt-out the
   * texts scheduled to the number are canceled (GetItem of the ledger, Query of the number's rows, per text GetItem
   * and a transaction of UpdateItems and a DeleteItem); then the answer (GetItem, Query of the history). The
   * Idempotency-Key records as for `createContact`.
   */
  recordConsent: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:Query',
    ],
  },
} satisfies Record<RouteId, TableAccess>;

/**
 * The exact per-key limiter (`rate-limit.consumeKeyBudget`) counts every authenticated request
 * with one UpdateItem on the key's window row, so even read-only routes write, but only rows
 * whose partition key is `T#<tenant>#RATE#<key>`: a read route cannot change any other row.
 */
export const KEY_RATE_LIMIT_ACCESS: TableAccess = {
  actions: ['dynamodb:UpdateItem'],
  partitionKeyPatterns: [tenantScopedPk('*', PREFIX.rateLimit, '*')],
};

/** The authorizer: key row by hash, then the organization row (`auth.authorizeAuthorizationHeader`). */
export const AUTHORIZER_TABLE_ACCESS: TableAccess = READ_ROWS;

/** Everything a route's function may do to the table: its own access, plus the limiter's when a key is required. */
export function tableAccessOf(route: Pick<RouteSpec, 'operationId' | 'auth'>): TableAccess[] {
  const own = (ROUTE_TABLE_ACCESS as Record<string, TableAccess>)[route.operationId];
  if (!own) throw new Error(`Route ${route.operationId} has no entry in ROUTE_TABLE_ACCESS (lib/table-access.ts)`);
  return route.auth === 'apiKey' ? [own, KEY_RATE_LIMIT_ACCESS] : [own];
}

/**
 * The webhook router (`lambdas/handlers/webhooks/router.ts`): lists the organization's endpoints (Query on
 * the base table), writes each delivery once (conditional PutItem), notes it queued (UpdateItem)
 * and re-reads a delivery an operator asked to redeliver (GetItem).
 */
export const WEBHOOK_ROUTER_TABLE_ACCESS: TableAccess = {
  actions: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
};

/**
 * The webhook sender (`lambdas/handlers/webhooks/sender.ts`): reads delivery, endpoint and organization in
 * one BatchGetItem (`attempt-state.readAttemptState`), records each attempt (UpdateItem), and notes the
 * endpoint's health on its row (UpdateItem: a failing streak's start and end, disabling it).
 */
export const WEBHOOK_SENDER_TABLE_ACCESS: TableAccess = {
  actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
};

/**
 * The carrier's callback functions (lambdas/handlers/carrier/*.ts through lambdas/contexts/carrier/).
 * Every one first finds the organization: GetItem of the number-owner rows, the call-owner row and
 * (with `?tenantId=`) the organization row (`organization.resolveOrganization`). Transactions are
 * authorized per item, so each lists the item actions inside its transactions; none uses Query.
 * A contact created for a number copies and checks its ledger row (GetItem, ConditionCheckItem).
 */
export const CARRIER_CALLBACK_TABLE_ACCESS = {
  /**
   * `calls.upsertCallByProviderSid`: GetItem (sid row); the first callback of a call writes the
   * sid row, the call-owner row and the call in one transaction (PutItem x3); every callback
   * applies its facts as conditional UpdateItems; each external number gets its contact and number
   * claim (`contacts.ensureContactForNumber`: GetItem of the claim, and for a new number a transaction of PutItems:
   * claim, contact, search entries, with the ledger's ConditionCheckItem); a voicemail waiting
   * for this call gets its numbers (`voicemails.attachCallToVoicemail`, UpdateItem).
   */
  twilioVoiceStatus: {
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  },
  /**
   * `callbacks.recordingCallback`: GetItem (call by sid), the voicemail row written by UpdateItem
   * (an upsert: no PutItem) and marked ready by another UpdateItem.
   */
  twilioVoiceRecording: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  /** `callbacks.transcriptionCallback`: as the recording, storing the transcript instead. */
  twilioVoiceTranscription: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  /**
   * `receiving.receiveInboundMessage`: first the message with its sid row (PutItem x2), its thread (GetItem, then
   * UpdateItem) and a consent keyword's ledger row and holder's copy (UpdateItem, ConditionCheckItem on the claim)
   * in one transaction, and GetItem of the first copy on a carrier retry; an opt-out keyword cancels the texts
   * scheduled to the number (`scheduled-changes.cancelScheduledTextsTo`: GetItem of the ledger, Query of the
   * number's rows, per text GetItem and a transaction of UpdateItems and a DeleteItem); then the sender's contact,
   * claim and search entries (a transaction of PutItems).
   */
  twilioSmsInbound: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:Query',
      'dynamodb:DeleteItem',
    ],
  },
  /**
   * `delivery-status.updateMessageStatus`: GetItem (sid row, message), then one transaction of
   * UpdateItems (message, thread's `lastStatus`, the refund of a failed text on its spend shard)
   * with the sid row's PutItem when the callback is the first to name the sid; an opt-out code
   * updates the ledger and the holder's copy (UpdateItem, ConditionCheckItem on the claim). A text
   * charged before spend shards existed reads the organization row (GetItem) and may make them (UpdateItem, PutItem).
   * An opt-out code cancels the texts scheduled to the number (Query of its rows, UpdateItem, DeleteItem).
   */
  twilioSmsStatus: {
    actions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:Query',
      'dynamodb:DeleteItem',
    ],
  },
} satisfies Record<CarrierRouteId, TableAccess>;

/**
 * The settlement sweep (`settlement.settleUnknownOutcomes`): Query on gsi2 (the unsettled
 * worklist), then per text GetItem and one transaction of UpdateItems (message, refund, thread);
 * a text charged before spend shards existed may have them made (UpdateItem, PutItem).
 */
export const TEXT_SETTLEMENT_TABLE_ACCESS: TableAccess = {
  actions: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  indexes: ['gsi2'],
};

/**
 * The firing of scheduled texts (`scheduled-texts.fireDueTexts`): Query on gsi2 (the due list), then
 * per text GetItem (message, organization), one transaction (UpdateItem of the message,
 * ConditionCheckItem of the number's consent, DeleteItem of the number's row) and the send's
 * writes (`hand-over.handOver`: sid PutItem and UpdateItem, or a failure's UpdateItems; a carrier
 * opt-out's ledger writes and cancels: Query of the number's rows); a text canceled at its time
 * is a transaction of UpdateItems and a DeleteItem. A refund to a shard made before spend shards
 * existed may make them (PutItem).
 */
export const SCHEDULED_TEXTS_TABLE_ACCESS: TableAccess = {
  actions: [
    'dynamodb:Query',
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    'dynamodb:PutItem',
    'dynamodb:DeleteItem',
    'dynamodb:ConditionCheckItem',
  ],
  indexes: ['gsi2'],
};
