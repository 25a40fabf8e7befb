import type { Client } from 'openapi-fetch';
import { sendInBatches, type BatchOptions, type BatchProgress, type BatchReport } from './batches';
import type { components, paths } from './schema';

type Schemas = components['schemas'];
/** One contact to delete: `{ id }` or `{ externalId }` (your own id of it). */
export type DeleteContact = Schemas['ContactDeleteItem'];
/** The answer for one contact of the source, at its position in the source (`index`). */
export type ContactDeleteResult = Schemas['ContactDeleteResult'];
export type ContactDeleteStatus = ContactDeleteResult['status'];

export type ContactDeleteProgress = BatchProgress<ContactDeleteResult>;
/** `startAt` resumes where a failed run stopped (`ContactDeleteError.nextIndex`). */
export type ContactDeleteOptions = BatchOptions<ContactDeleteResult>;
export type ContactDeleteReport = BatchReport<ContactDeleteResult>;

/**
 * A batch delete that stopped: `results` has every answer before `nextIndex`, the position in the
 * source to pass as `startAt` to go on (sending a contact again is harmless: one already deleted is
 * `not_found`).
 */
export class ContactDeleteError extends Error {
  constructor(
    message: string,
    readonly nextIndex: number,
    readonly results: ContactDeleteResult[],
    readonly status?: number,
    readonly code?: string,
    /** Source positions still answered `unavailable` after every attempt (nothing was deleted for them). */
    readonly unavailable: number[] = [],
  ) {
    super(message);
    this.name = 'ContactDeleteError';
  }
}

/**
 * `client.contacts.deleteMany(source, options)`: deletes the contacts of an array, any iterable or
 * an async iterable, each named by `{ id }` or `{ externalId }`, through `POST
 * /contacts/batch/delete`, 100 to a request, as ./batches.ts sends any batch (an Idempotency-Key
 * per request, `Retry-After`, the key's minute, `unavailable` contacts sent again). Resolves with
 * one answer per contact in source order (`deleted`, `not_found`, `invalid`); rejects with
 * `ContactDeleteError` (which says where to resume) when a batch keeps failing or the API refuses
 * the key, and when contacts are still `unavailable` after `maxAttempts`.
 */
export function deleteContacts(
  client: Client<paths>,
  source: Iterable<DeleteContact> | AsyncIterable<DeleteContact>,
  options: ContactDeleteOptions = {},
): Promise<ContactDeleteReport> {
  return sendInBatches<DeleteContact, ContactDeleteResult>(
    (contacts, key, signal) =>
      client.POST('/contacts/batch/delete', {
        body: { contacts },
        params: { header: { 'Idempotency-Key': key } },
        signal,
      }),
    source,
    options,
    (...args) => new ContactDeleteError(...args),
  );
}
