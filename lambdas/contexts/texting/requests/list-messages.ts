import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';
import { e164 } from '../../../shared/schemas/phone-number';

export const ListMessagesQuery = z.strictObject({ limit: limitParam, cursor: cursorParam });

export const CounterpartPath = z.object({
  // A clone: `e164` itself is shared by every number field.
  counterpart: e164
    .clone()
    .register(z.globalRegistry, { description: 'External number, E.164; `+` may be sent literally or as %2B' }),
});
