import type { RouteId, RouteSpec } from '../lambdas/api/routes';
import { PREFIX, tenantScopedPk } from '../lambdas/core/keys';
import type { TableAccess } from './constructs/table';

/**
 * What each function does to the table, and so exactly what it may do. Derived from the DynamoDB
 * commands the code sends (lambdas/core/*.ts); the `satisfies` clause makes `tsc` fail when a
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
  /** Answered from the authorizer's context; no table read. */
  getMe: NONE,
  /** `calls.listCalls`: base table, or gsi1 when filtered by direction. */
  listCalls: LIST_PAGE,
  /** `calls.getCall`. */
  getCall: READ_ROWS,
  /** `contacts.getContact`. */
  getContact: READ_ROWS,
  /** `contacts.listContacts`: base table, or gsi1 (named contacts only) when includeAutoCreated=false. */
  listContacts: LIST_PAGE,
  /**
   * `contacts.createContact`: a transaction of two Puts (claim + contact); adoption is a
   * transaction of two Updates (claim + contact) followed by a GetItem of the adopted contact.
   * No ConditionCheck item is used, so none is granted. The Idempotency-Key records (Powertools)
   * are Put, Get, Update and Delete: a failed request (a 409) deletes its record to free the key.
   */
  createContact: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
  /**
   * `contacts.updateContact`: GetItem, then an UpdateItem, or a transaction moving the claim
   * (Update contact, Delete old claim, Put new claim).
   */
  updateContact: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem'] },
  /** `contacts.deleteContact`: GetItem, then a transaction deleting contact and claim. */
  deleteContact: { actions: ['dynamodb:GetItem', 'dynamodb:DeleteItem'] },
  /** `threads.listThreads`: every thread of the organization on gsi2 (by last activity). */
  listThreads: { actions: ['dynamodb:Query'], indexes: ['gsi2'] },
  /** `messages.listMessages`: one conversation on gsi1. */
  listMessages: { actions: ['dynamodb:Query'], indexes: ['gsi1'] },
  /**
   * `texting.sendMessage`: GetItem (organization, number claim, contact), UpdateItem (charge,
   * refund, message status, thread), PutItem (message, sid row, in transactions); the
   * Idempotency-Key records (Powertools) are Put, Get, Update and Delete.
   */
  sendMessage: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
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
 * The webhook router (`lambdas/webhooks/router.ts`): lists the organization's endpoints (Query on
 * the base table), writes each delivery once (conditional PutItem), notes it queued (UpdateItem)
 * and re-reads a delivery an operator asked to redeliver (GetItem).
 */
export const WEBHOOK_ROUTER_TABLE_ACCESS: TableAccess = {
  actions: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'],
};

/** The webhook sender (`lambdas/webhooks/sender.ts`): reads delivery, endpoint and organization, records each attempt. */
export const WEBHOOK_SENDER_TABLE_ACCESS: TableAccess = {
  actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
};
