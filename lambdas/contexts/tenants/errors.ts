import { DomainError } from '../../shared/errors';

/**
 * The errors of the tenants context: who may call, with which scope, how often, and which numbers
 * an organization holds. Mapped to HTTP with every other DomainError (lambdas/handlers/http/error-mapper.ts).
 */

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

export class RateLimitedError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      'rate_limited',
      `Rate limit exceeded; retry after ${retryAfterSeconds} seconds`,
      {},
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
  }
}

/** A phone number routes the carrier's callbacks to one organization, so two cannot hold it. */
export class NumberTakenError extends DomainError {
  constructor(number: string) {
    super(409, 'number_taken', `The number ${number} already belongs to another organization`, { number });
  }
}
