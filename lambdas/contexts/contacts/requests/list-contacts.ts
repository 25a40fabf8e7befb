import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';
import { externalId } from './contact-fields';

const trueOrFalse = z.optional(z.enum(['true', 'false']));

export const ListContactsQuery = z
  .strictObject({
    limit: limitParam,
    cursor: cursorParam,
    search: z.optional(z.string().check(z.minLength(1), z.maxLength(200))).register(z.globalRegistry, {
      description:
        'Contacts matching every word of the query, newest first, paged like the list. A word matches the start of a ' +
        'word of the ' +
        'display name or company, ignoring case and accents (`ada love` finds "Ada Lovelace"; `velace` does not). A ' +
        'query made ' +
        'only of digits, spaces and `+().-` is one number: it matches the first digits of the number, with or ' +
        'without the country ' +
        'code, from 3 digits (`415 555`, `+1 415 555`), or its last 4 to 10 digits (`0100`, `555-0100`). Each ' +
        'contact is indexed ' +
        'under at most 48 entries: its number, then the words of its name and company in order, each by its first 6 ' +
        'characters ' +
        '(longer query words are checked in full); a word beyond that bound is not searchable.',
    }),
    includeAutoCreated: z
      .pipe(
        trueOrFalse,
        z.transform((v: 'true' | 'false' | undefined) => v !== 'false'),
      )
      .register(z.globalRegistry, {
        description: 'Whether contacts the system created from call history are included (default true)',
      }),
    externalId: z.optional(externalId).register(z.globalRegistry, {
      description:
        'The contact holding this external id (compared exactly), as a page of at most one contact; an empty page ' +
        'when none does. ' +
        'Not combined with `search`, `updatedSince` or `cursor`.',
    }),
    updatedSince: z.optional(z.iso.datetime({ offset: true })).register(z.globalRegistry, {
      description:
        'Changes since a time (ISO 8601): every contact changed at or after it (its fields, its number, or its ' +
        "number's consent), " +
        'oldest change first, in pages of `limit` with `cursor`. A contact changed again while you page moves to the ' +
        'end and appears ' +
        'again. A page may hold fewer than `limit` contacts while `nextCursor` is not null. Every page carries ' +
        '`nextUpdatedSince`, the `updatedSince` of your next walk. Not combined with `search`.',
    }),
    includeDeleted: z
      .pipe(
        trueOrFalse,
        z.transform((v: 'true' | 'false' | undefined) => v === 'true'),
      )
      .register(z.globalRegistry, {
        description:
          'With `updatedSince`: also the contacts deleted since then, in `deletedContacts` (default false). A ' +
          'deleted contact is kept there for 30 days: an `updatedSince` (or a cursor) older than that is 410 ' +
          '`resync_required` naming `oldestUpdatedSince`.',
      }),
  })
  .check(
    z.superRefine((query, ctx) => {
      const refuse = (field: string, message: string) =>
        ctx.addIssue({ code: 'custom', path: [field], message, input: query });
      if (query.externalId !== undefined) {
        for (const other of ['search', 'updatedSince', 'cursor'] as const) {
          if (query[other] !== undefined) return refuse(other, 'cannot be combined with externalId');
        }
      }
      if (query.updatedSince !== undefined && query.search !== undefined)
        return refuse('search', 'cannot be combined with updatedSince');
      if (query.includeDeleted && query.updatedSince === undefined)
        return refuse('includeDeleted', 'applies only with updatedSince');
      return undefined;
    }),
  );
