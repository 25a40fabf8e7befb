/**
 * Typed domain errors. Each carries its HTTP status and machine-readable `code`; the one place
 * that turns them into responses is `lambdas/handlers/http/error-mapper.ts`.
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

export class UnauthorizedError extends DomainError {
  constructor(message = 'A valid API key is required: send "Authorization: Bearer <API_KEY>"') {
    super(401, 'unauthorized', message, {}, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class InsufficientScopeError extends DomainError {
  constructor(scope: string) {
    super(403, 'insufficient_scope', `This API key lacks the scope "${scope}" required for this operation`, {
      requiredScope: scope,
    });
  }
}

export class ApiAccessDisabledError extends DomainError {
  constructor() {
    super(403, 'api_access_disabled', "This organization's plan does not include API access");
  }
}

export class ContactConflictError extends DomainError {
  constructor(contactId: string) {
    super(409, 'contact_conflict', 'Another contact already has this phone number', { contactId });
  }
}

export class RateLimitedError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', `Rate limit exceeded; retry after ${retryAfterSeconds} seconds`, {}, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

// ---------- texts (POST /messages) and Idempotency-Key ----------

export class NoSmsNumberError extends DomainError {
  constructor() {
    super(409, 'no_sms_number', 'No SMS-capable number is configured for this organization');
  }
}

export class RecipientOptedOutError extends DomainError {
  constructor() {
    super(409, 'recipient_opted_out', 'The recipient has opted out of text messages (replied STOP)');
  }
}

export class BillingBlockedError extends DomainError {
  constructor() {
    super(402, 'billing_blocked', "The organization's billing status does not allow sending");
  }
}

export class SpendingLimitReachedError extends DomainError {
  constructor() {
    super(402, 'spending_limit_reached', "Sending this message would exceed the organization's spending limit");
  }
}

export class CarrierUnavailableError extends DomainError {
  constructor() {
    super(502, 'carrier_unavailable', 'The carrier did not accept the message; nothing was billed, it is safe to retry');
  }
}

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

// ---------- organization numbers (carrier) ----------

/** A phone number routes the carrier's callbacks to one organization, so two cannot hold it. */
export class NumberTakenError extends DomainError {
  constructor(number: string) {
    super(409, 'number_taken', `The number ${number} already belongs to another organization`, { number });
  }
}
