import { ERROR_STATUS, type ErrorCode } from '../../../shared/errors';
import type { RouteSpec } from '../../http/route-spec';

/**
 * What each error code means and an example of its body, for the OpenAPI document: the
 * `ErrorCode` component's description, and each operation's error responses (a description
 * naming its codes, a schema narrowing `code` to them, one example per code). Documentation
 * only: the messages the service writes are the error classes' own.
 */
type CodeDoc = { meaning: string; example: Record<string, unknown> & { error: string } };

const CONTACT_ID = '0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9d';
const MESSAGE_ID = '0193a4c0-1d2e-7f3a-8b4c-5d6e7f8a9b0c';

export const ERROR_CODE_DOCS: Record<ErrorCode, CodeDoc> = {
  validation_failed: {
    meaning: 'a parameter, header or body field failed validation; `error` names it',
    example: { error: 'body.phoneNumber: must be an E.164 phone number such as +14155550123' },
  },
  unauthorized: {
    meaning: 'the API key is missing, malformed, unknown, revoked or expired (header `WWW-Authenticate: Bearer`)',
    example: { error: 'A valid API key is required: send "Authorization: Bearer <API_KEY>"' },
  },
  billing_blocked: {
    meaning: "the organization's billing status does not allow sending",
    example: { error: "The organization's billing status does not allow sending" },
  },
  spending_limit_reached: {
    meaning: 'this text would take the organization over its spending limit',
    example: { error: "Sending this message would exceed the organization's spending limit" },
  },
  insufficient_scope: {
    meaning:
      'the key lacks the scope the operation requires (`error` names it; `GET /me` lists the scopes the key holds)',
    example: { error: 'This API key lacks the scope "contacts.manage" required for this operation' },
  },
  api_access_disabled: {
    meaning: "the organization's plan does not include API access",
    example: { error: "This organization's plan does not include API access" },
  },
  request_refused: {
    meaning: 'API Gateway refused the request for a reason of its own (deployed service only)',
    example: { error: 'Forbidden' },
  },
  not_found: {
    meaning: 'no such row in this organization (or no such endpoint)',
    example: { error: 'Contact not found' },
  },
  method_not_allowed: {
    meaning: 'the path exists, but not with this method',
    example: { error: 'This method is not allowed on this path' },
  },
  contact_conflict: {
    meaning: 'another contact already has this phone number; `contactId` names it',
    example: { error: 'Another contact already has this phone number', contactId: CONTACT_ID },
  },
  no_sms_number: {
    meaning: 'the organization has no SMS-capable number to send from',
    example: { error: 'No SMS-capable number is configured for this organization' },
  },
  recipient_opted_out: {
    meaning:
      'the recipient opted out (a STOP reply, the carrier, or an opt-out recorded through `POST /consent`): the ' +
      'number is not texted until it replies START or an opt-in with evidence is recorded; ' +
      '`messageId` names the failed, unbilled message when the carrier reported the opt-out on this very send',
    example: { error: 'The recipient has opted out of text messages' },
  },
  idempotency_conflict: {
    meaning: 'a request with the same Idempotency-Key is still running; retry it later with the same key',
    example: { error: 'A request with this Idempotency-Key is still being processed; retry later' },
  },
  not_scheduled: {
    meaning: 'the text is no longer scheduled: it was sent (or is being sent), failed, or was canceled',
    example: {
      error: 'The message is canceled, no longer scheduled',
      messageId: '0193b3c0-5c1a-7d2e-9f00-4a5b6c7d8e9f',
      status: 'canceled',
    },
  },
  consent_superseded: {
    meaning:
      "a later change of the number's consent is on record (the evidence's `collectedAt` is older): the person's " +
      'later decision stands and nothing was changed; `status` and `updatedAt` say what is on record',
    example: {
      error: 'A later change is on record for this number (opted_out at 2026-11-20T16:25:03.117Z); nothing was changed',
      status: 'opted_out',
      updatedAt: '2026-11-20T16:25:03.117Z',
    },
  },
  number_taken: {
    meaning: 'the number already belongs to another organization (operator CLI only)',
    example: { error: 'The number +14155550100 already belongs to another organization', number: '+14155550100' },
  },
  resync_required: {
    meaning:
      "the feed of changes cannot answer deletions from before the tombstones' 30 days: walk the whole directory " +
      'again; `oldestUpdatedSince` is the oldest `updatedSince` it answers with `includeDeleted=true`',
    example: {
      error:
        'updatedSince: deletions are kept 30 days; the oldest updatedSince with includeDeleted=true is ' +
        '2026-10-29T14:21:08.000Z: walk the whole directory again',
      oldestUpdatedSince: '2026-10-29T14:21:08.000Z',
    },
  },
  payload_too_large: {
    meaning: 'the body is larger than 64 KiB',
    example: { error: 'body: must be at most 65536 bytes' },
  },
  unsupported_media_type: {
    meaning: 'the body is not `application/json`',
    example: { error: 'Content-Type must be application/json' },
  },
  idempotency_mismatch: {
    meaning: 'the Idempotency-Key was already used with a different body',
    example: { error: 'This Idempotency-Key was already used with a different request body' },
  },
  carrier_rejected: {
    meaning:
      'the carrier refused the text for good (e.g. an invalid number): the message is `failed` and nothing is billed',
    example: {
      error: 'The carrier refused this text (carrier error 21211); nothing was billed',
      messageId: MESSAGE_ID,
      carrierCode: 21211,
    },
  },
  quiet_hours: {
    meaning:
      "the organization's quiet-hours policy is `refuse` and it is outside the recipient's window in the recipient's " +
      'local time (docs/api.md, "Quiet hours"): `allowedAt` is the next instant the window opens for that number',
    example: {
      error:
        "It is outside the recipient's allowed hours (quiet hours); the next allowed time is 2026-03-09T12:00:00.000Z",
      allowedAt: '2026-03-09T12:00:00.000Z',
    },
  },
  rate_limited: {
    meaning: 'too many requests: wait `Retry-After` seconds',
    example: { error: 'Rate limit exceeded; retry after 42 seconds' },
  },
  internal: {
    meaning: 'an unexpected error; the message carries the request id',
    example: { error: 'Internal error (request 8f14e45f-ceea-467f-a0e6-2f6b4a2c1d3e)' },
  },
  carrier_unavailable: {
    meaning:
      'the carrier certainly did not take the text: nothing is billed and sending again with a new Idempotency-Key ' +
      'is safe ' +
      '(when it may have taken it, the answer is 201 `queued` instead)',
    example: {
      error:
        'The carrier did not take the message; nothing was billed and it is safe to send again (with a new ' +
        'Idempotency-Key)',
    },
  },
  temporarily_unavailable: {
    meaning:
      "the organization's data is too busy right now (DynamoDB throttled or other writes held the same rows, and the " +
      "service's own retries " +
      'did not outlast it): nothing was changed; send the same request again after `Retry-After` seconds (with the ' +
      'same Idempotency-Key, if any)',
    example: { error: "The service is busy with this organization's data; nothing was changed, retry after 1 second" },
  },
};

/** The `ErrorCode` component's description: every code and what it means. */
export const ERROR_CODE_LIST = Object.entries(ERROR_CODE_DOCS)
  .map(([code, doc]) => `- \`${code}\` (${ERROR_STATUS[code as ErrorCode]}): ${doc.meaning}`)
  .join('\n');

/**
 * Every code the operation can answer: its own rules' codes (`route.errors`) and those of the
 * layers it passes through, in the order of the chain (lambdas/handlers/http/api-handler.ts).
 */
export function errorCodesOf(route: RouteSpec): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if (route.auth) codes.push('unauthorized', 'api_access_disabled');
  codes.push('rate_limited');
  if (route.auth && route.scope) codes.push('insufficient_scope');
  if (route.body) codes.push('payload_too_large', 'unsupported_media_type');
  // A path parameter with a malformed percent-escape is 400 naming it, on every route that has one.
  if (route.body || route.query || route.idempotent || route.path_params || route.invalidPathStatus === 400)
    codes.push('validation_failed');
  if (route.path_params && route.invalidPathStatus !== 400) codes.push('not_found');
  codes.push(...route.errors);
  if (route.idempotent) codes.push('idempotency_conflict', 'idempotency_mismatch');
  codes.push('internal');
  // Every keyed request writes its key's rate-limit window; most read or write the organization's rows.
  if (route.auth) codes.push('temporarily_unavailable');
  return [...new Set(codes)];
}

/** The codes grouped by the status they are answered with, statuses ascending. */
export function codesByStatus(codes: readonly ErrorCode[]): [number, ErrorCode[]][] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return [...byStatus.entries()].sort(([a], [b]) => a - b);
}
