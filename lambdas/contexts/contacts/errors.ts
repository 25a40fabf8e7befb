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

/**
 * 410: the feed of changes cannot answer a walk that asks for deletions from before the tombstones' retention; the
 * client walks the whole directory again (docs/api.md, "Changes since a time").
 */
export class ResyncRequiredError extends DomainError {
  constructor(oldestUpdatedSince: string) {
    super(
      410,
      'resync_required',
      `updatedSince: deletions are kept 30 days; the oldest updatedSince with includeDeleted=true is ${oldestUpdatedSince}: walk the whole directory again`,
      { oldestUpdatedSince },
    );
  }
}
