import { DomainError } from '../../shared/errors';

/**
 * The errors of the consent ledger's rules, mapped to HTTP with every other DomainError
 * (lambdas/handlers/http/error-mapper.ts).
 */

/**
 * A change older than the one on record (its evidence's `collectedAt` is before the number's latest
 * change): the person's later decision stands, so nothing is written.
 */
export class ConsentSupersededError extends DomainError {
  constructor(status: string, updatedAt: string | null) {
    super(
      409,
      'consent_superseded',
      `A later change is on record for this number (${status} at ${updatedAt}); nothing was changed`,
      { status, updatedAt },
    );
  }
}
