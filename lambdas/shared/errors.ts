/**
 * Typed domain errors: the base every context's errors extend (each context's errors.ts) and the two
 * every context throws. Each carries its HTTP status and machine-readable `code`; the one place
 * that turns them into responses is `lambdas/handlers/http/error-mapper.ts`. `ErrorCode` is the
 * API's whole list of codes, whichever context raises them.
 */
export type ErrorCode =
  | 'validation_failed'
  | 'not_found'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'api_access_disabled'
  | 'rate_limited'
  | 'contact_conflict'
  | 'no_sms_number'
  | 'recipient_opted_out'
  | 'billing_blocked'
  | 'spending_limit_reached'
  | 'carrier_unavailable'
  | 'carrier_rejected'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_conflict'
  | 'idempotency_mismatch'
  | 'number_taken'
  | 'internal';

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra fields of the Error body, e.g. `contactId` on a 409. */
    readonly details: Record<string, unknown> = {},
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  constructor(message: string) {
    super(400, 'validation_failed', message);
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string) {
    super(404, 'not_found', `${what} not found`);
  }
}


/** The response header that marks an answer given again for a repeated Idempotency-Key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export class IdempotencyConflictError extends DomainError {
  constructor() {
    super(409, 'idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry later');
  }
}

export class IdempotencyMismatchError extends DomainError {
  constructor() {
    super(422, 'idempotency_mismatch', 'This Idempotency-Key was already used with a different request body');
  }
}
