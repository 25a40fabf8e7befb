/**
 * Typed domain errors: the base every context's errors extend (each context's errors.ts) and the two
 * every context throws. Each carries its HTTP status and machine-readable `code`; the one place
 * that turns them into responses is `lambdas/handlers/http/error-mapper.ts`. `ErrorCode` is the
 * API's whole list of codes, whichever context raises them.
 */
/**
 * Every code an Error body can carry, with the HTTP status it is answered with. The OpenAPI
 * document lists them as the `ErrorCode` enum and, per operation, the codes each status can carry
 * (lambdas/handlers/api/openapi/error-codes.ts), so a typed client can switch on `code`.
 */
export const ERROR_STATUS = {
  validation_failed: 400,
  unauthorized: 401,
  billing_blocked: 402,
  spending_limit_reached: 402,
  insufficient_scope: 403,
  api_access_disabled: 403,
  /** API Gateway's answer to a refusal of its own that no gateway response of ours names (AWS only). */
  request_refused: 403,
  not_found: 404,
  method_not_allowed: 405,
  contact_conflict: 409,
  no_sms_number: 409,
  recipient_opted_out: 409,
  idempotency_conflict: 409,
  /** A cancel or reschedule of a text that is no longer scheduled. */
  not_scheduled: 409,
  /** A consent change older than the number's latest one on record (POST /consent). */
  consent_superseded: 409,
  /** The operator CLI's, when a number is registered to two organizations; no API route answers it. */
  number_taken: 409,
  /** The feed of changes: deletions asked for from before the tombstones' retention (a full resync is needed). */
  resync_required: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_mismatch: 422,
  carrier_rejected: 422,
  /** The recipient's local time is outside its window under the organization's quiet-hours policy `refuse`. */
  quiet_hours: 422,
  rate_limited: 429,
  internal: 500,
  carrier_unavailable: 502,
  /** DynamoDB contention that outlasted the retries (shared/table/contention.ts): nothing was written. */
  temporarily_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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

/**
 * Contention the service's retries could not outlast (a throttled partition, items held by other
 * transactions): nothing was written, so the same request again after `Retry-After` is safe.
 */
export class TemporarilyUnavailableError extends DomainError {
  /** `reason`: what kept changing, for the log (never the client's answer). */
  constructor(
    readonly reason?: string,
    retryAfterSeconds = 1,
  ) {
    super(
      503,
      'temporarily_unavailable',
      `The service is busy with this organization's data; nothing was changed, retry after ${retryAfterSeconds} ` +
        `second${retryAfterSeconds === 1 ? '' : 's'}`,
      {},
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
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
