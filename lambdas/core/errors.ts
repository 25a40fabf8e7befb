/**
 * Typed domain errors. Each carries its HTTP status and machine-readable `code`; the one place
 * that turns them into responses is `lambdas/http/error-mapper.ts`.
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
