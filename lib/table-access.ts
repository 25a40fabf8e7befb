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
  /** `contacts.getContact`: the contact, then its number's consent ledger row (BatchGetItem, as for a page). */
  getContact: { actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'] },
  /**
   * `contacts.listContacts`: base table, or gsi1 (named contacts only) when includeAutoCreated=false;
   * then the page's consent ledger rows in one BatchGetItem. A search queries one partition of
   * the search index and reads its contacts with BatchGetItem.
   */
  listContacts: { ...LIST_PAGE, actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'] },
  /**
   * `contacts.createContact`: a transaction of Puts (claim, contact, its search entries); adoption
   * reads the contact (GetItem), then a transaction of two Updates (claim + contact) with the
   * changed search entries (Put, Delete), followed by a GetItem of the adopted contact; the
   * number's consent ledger row is read with BatchGetItem.
   * No ConditionCheck item is used, so none is granted. The Idempotency-Key records (Powertools)
   * are Put, Get, Update and Delete: a failed request (a 409) deletes its record to free the key.
   */
  createContact: { actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
  /**
   * `contacts.updateContact`: GetItem, then an UpdateItem, or a transaction moving the claim
   * and the changed search entries (Update contact, Delete old claim and entries, Put new ones).
   */
  updateContact: { actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'] },
  /** `contacts.deleteContact`: GetItem, then a transaction deleting contact, claim and search entries. */
  deleteContact: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem'] },
  /** `threads.listThreads`: one page of the organization's threads on gsi2 (by last activity). */
  listThreads: { actions: ['dynamodb:Query'], indexes: ['gsi2'] },
  /** `messages.listMessages`: one conversation on gsi1. */
  listMessages: { actions: ['dynamodb:Query'], indexes: ['gsi1'] },
  /**
   * `sending.sendMessage`: GetItem (Idempotency-Key row, organization, message on a replay); one
   * transaction of ConditionCheckItem (the number's consent), UpdateItem (charge, thread), PutItem
   * (message, Idempotency-Key row); then the sid (UpdateItem + PutItem of the sid row), or a failure
   * (UpdateItem: message, refund, thread),
   * and the ledger's UpdateItem when the carrier reports an opt-out.
   */
  sendMessage: { actions: ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
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
 * authorized per item, so each lists the item actions inside its transactions; none uses Query,
 * DeleteItem or ConditionCheckItem, and none is granted them.
 */
export const CARRIER_CALLBACK_TABLE_ACCESS = {
  /**
   * `calls.upsertCallByProviderSid`: GetItem (sid row); the first callback of a call writes the
   * sid row, the call-owner row and the call in one transaction (PutItem x3); every callback
   * applies its facts as conditional UpdateItems; each external number gets its contact and number
   * claim (`contacts.ensureContactForNumber`, a transaction of PutItems: claim, contact, search entries); a voicemail waiting
   * for this call gets its numbers (`voicemails.attachCallToVoicemail`, UpdateItem).
   */
  twilioVoiceStatus: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
  /**
   * `callbacks.recordingCallback`: GetItem (call by sid), the voicemail row written by UpdateItem
   * (an upsert: no PutItem) and marked ready by another UpdateItem.
   */
  twilioVoiceRecording: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  /** `callbacks.transcriptionCallback`: as the recording, storing the transcript instead. */
  twilioVoiceTranscription: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  /**
   * `receiving.receiveInboundMessage`: the sender's contact, claim and search entries (a transaction of PutItems),
   * the message with its sid row (PutItem x2), its thread and a consent keyword's ledger row
   * (UpdateItem) in one transaction, and GetItem of the first copy on a carrier retry.
   */
  twilioSmsInbound: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
  /**
   * `delivery-status.updateMessageStatus`: GetItem (sid row, message), then one transaction of
   * UpdateItems (message, thread's `lastStatus`, the refund of a failed text) with the sid row's
   * PutItem when the callback is the first to name the sid; an opt-out code updates the ledger.
   */
  twilioSmsStatus: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
} satisfies Record<CarrierRouteId, TableAccess>;

/**
 * The settlement sweep (`settlement.settleUnknownOutcomes`): Query on gsi2 (the unsettled
 * worklist), then per text GetItem and one transaction of UpdateItems (message, refund, thread).
 */
export const TEXT_SETTLEMENT_TABLE_ACCESS: TableAccess = { actions: ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], indexes: ['gsi2'] };
