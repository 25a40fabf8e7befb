import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';

export const ListCallsQuery = z.strictObject({
  limit: limitParam,
  cursor: cursorParam,
  direction: z.optional(z.enum(['inbound', 'outbound'])),
  since: z
    .optional(z.iso.datetime({ offset: true }))
    .register(z.globalRegistry, { description: 'Only calls that started at or after this instant (ISO 8601)' }),
});
