import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';

export const ListContactsQuery = z.strictObject({
  limit: limitParam,
  cursor: cursorParam,
  search: z
    .optional(z.string().check(z.minLength(1), z.maxLength(200)))
    .register(z.globalRegistry, {
      description:
        'Contacts matching every word of the query, newest first, paged like the list. A word matches the start of a word of the ' +
        "display name or company, ignoring case and accents (`ada love` finds \"Ada Lovelace\"; `velace` does not). A query made " +
        'only of digits, spaces and `+().-` is one number: it matches the first digits of the number, with or without the country ' +
        'code, from 3 digits (`415 555`, `+1 415 555`), or its last 4 to 10 digits (`0100`, `555-0100`). Each contact is indexed ' +
        'under at most 48 entries: its number, then the words of its name and company in order, each by its first 6 characters ' +
        '(longer query words are checked in full); a word beyond that bound is not searchable.',
    }),
  includeAutoCreated: z
    .pipe(z.optional(z.enum(['true', 'false'])), z.transform((v: 'true' | 'false' | undefined) => v !== 'false'))
    .register(z.globalRegistry, { description: 'Whether contacts the system created from call history are included (default true)' }),
});
