import { DomainError } from '../../shared/errors';

/**
 * The errors of the contacts context, mapped to HTTP with every other DomainError
 * (lambdas/handlers/http/error-mapper.ts).
 */

/** The contact field a conflict is about: a number and an external id each belong to one contact. */
export type ClaimedField = 'phoneNumber' | 'externalId';

export class ContactConflictError extends DomainError {
  constructor(
    contactId: string,
    readonly field: ClaimedField = 'phoneNumber',
  ) {
    super(
      409,
      'contact_conflict',
      field === 'phoneNumber'
        ? 'Another contact already has this phone number'
        : 'Another contact already has this external id',
      { contactId },
    );
  }
}
