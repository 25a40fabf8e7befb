import type { Client } from 'openapi-fetch';
import { sendInBatches, type BatchOptions, type BatchProgress, type BatchReport } from './batches';
import type { components, paths } from './schema';

type Schemas = components['schemas'];
/** One contact to import: the fields of `POST /contacts` (`externalId` to match your own records). */
export type ImportContact = Schemas['ContactBatchItem'];
/** The answer for one contact of the source, at its position in the source (`index`). */
export type ContactImportResult = Schemas['ContactBatchResult'];
export type ContactImportStatus = ContactImportResult['status'];

export type ContactImportProgress = BatchProgress<ContactImportResult>;
/** `startAt` resumes where a failed import stopped (`ContactImportError.nextIndex`). */
export type ContactImportOptions = BatchOptions<ContactImportResult>;
export type ContactImportReport = BatchReport<ContactImportResult>;

/**
 * An import that stopped: `results` has every answer before `nextIndex`, the position in the
 * source to pass as `startAt` to go on (what was sent before it is written; sending it again is
 * harmless, since every contact is matched by its external id or number).
 */
export class ContactImportError extends Error {
  constructor(
    message: string,
    readonly nextIndex: number,
    readonly results: ContactImportResult[],
    readonly status?: number,
    readonly code?: string,
    /** Source positions still answered `unavailable` after every attempt (nothing was written for them). */
    readonly unavailable: number[] = [],
  ) {
    super(message);
    this.name = 'ContactImportError';
  }
}

/**
 * `client.contacts.import(source, options)`: sends the contacts of an array, any iterable or an
 * async iterable (a Node stream in object mode) to `POST /contacts/batch`, 100 to a request, as
 * ./batches.ts sends any batch (Idempotency-Keys, `Retry-After`, the key's minute, `unavailable`
 * contacts sent again). Resolves with one answer per contact in source order; rejects with
 * `ContactImportError` (which says where to resume) when a batch keeps failing or the API refuses
 * the key, and when contacts are still `unavailable` after `maxAttempts` (`unavailable` names their
 * source positions; the other answers are in `results`).
 */
export function importContacts(
  client: Client<paths>,
  source: Iterable<ImportContact> | AsyncIterable<ImportContact>,
  options: ContactImportOptions = {},
): Promise<ContactImportReport> {
  return sendInBatches<ImportContact, ContactImportResult>(
    (contacts, key, signal) =>
      client.POST('/contacts/batch', { body: { contacts }, params: { header: { 'Idempotency-Key': key } }, signal }),
    source,
    options,
    (...args) => new ContactImportError(...args),
  );
}
