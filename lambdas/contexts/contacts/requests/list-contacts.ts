import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';

export const ListContactsQuery = z.strictObject({
  limit: limitParam,
  cursor: cursorParam,
  search: z
    .optional(z.string().check(z.minLength(1), z.maxLength(200)))
    .register(z.globalRegistry, { description: 'Case-insensitive match on display name or company, or digits of the number' }),
  includeAutoCreated: z
    .pipe(z.optional(z.enum(['true', 'false'])), z.transform((v: 'true' | 'false' | undefined) => v !== 'false'))
    .register(z.globalRegistry, { description: 'Whether contacts the system created from call history are included (default true)' }),
});
