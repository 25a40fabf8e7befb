/**
 * The `type` attribute of the rows whose changes the webhook router reacts to, defined once: the
 * entity modules write it and the router's filter criteria and event derivation read it. No
 * imports, so that the CDK construct can read them without loading the data-access modules.
 */
export const ROW_TYPES = {
  call: 'call',
  message: 'message',
  voicemail: 'voicemail',
  delivery: 'webhookDelivery',
  /** A contact of the directory (contact.created, contact.updated). */
  contact: 'contact',
  /** What a deleted contact leaves for 30 days: its id and when it went (contact.deleted, `includeDeleted`). */
  contactTombstone: 'contactTombstone',
  /** A number's row of the consent ledger (consent.changed). */
  consent: 'consent',
} as const;

/**
 * Epoch milliseconds of the write that made a row an event (a call's terminal status, an inbound
 * message, a voicemail turning ready): the event's `createdAt` and the time prefix of its id and
 * its deliveries' ids. The stream record's own time is approximate (whole seconds in Lambda,
 * whole minutes in DynamoDB Local), too coarse to order two events of one second.
 */
export const CHANGED_AT = 'changedAt';

/**
 * The API request that made a row's latest change, written with the change (absent when the carrier or the system made
 * it): API Gateway's request id and the request's Idempotency-Key. Events name it as `request`, so a receiver can
 * drop the echo of its own write.
 */
export const CHANGE_REQUEST = { id: 'changeRequestId', idempotencyKey: 'changeIdempotencyKey' } as const;

/** The API request a change comes from: API Gateway's request id and the Idempotency-Key it carried. */
export type ChangeRequest = { id: string; idempotencyKey: string | null };

/**
 * The request of a change as parts of the UpdateItem that makes it: set when an API request made it, removed when
 * the carrier or the system did, so a row never names an earlier write's request (shared/table/update-expression.ts).
 */
export function changeRequestParts(request: ChangeRequest | null | undefined): {
  set: Record<string, string>;
  remove: string[];
} {
  if (!request) return { set: {}, remove: [CHANGE_REQUEST.id, CHANGE_REQUEST.idempotencyKey] };
  if (request.idempotencyKey === null)
    return { set: { [CHANGE_REQUEST.id]: request.id }, remove: [CHANGE_REQUEST.idempotencyKey] };
  return {
    set: { [CHANGE_REQUEST.id]: request.id, [CHANGE_REQUEST.idempotencyKey]: request.idempotencyKey },
    remove: [],
  };
}
