import { DomainError } from '../../shared/errors';

/** The errors of the contacts context, mapped to HTTP with every other DomainError (lambdas/handlers/http/error-mapper.ts). */

export class ContactConflictError extends DomainError {
  constructor(contactId: string) {
    super(409, 'contact_conflict', 'Another contact already has this phone number', { contactId });
  }
}
