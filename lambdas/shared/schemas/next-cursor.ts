import * as z from 'zod/mini';
import './zod-english';

/**
 * The `nextCursor` of a list response (calls, contacts). A response shape, documented and never
 * validated, so apart from the request parameters of ./paging.ts, which the list handlers bundle.
 */
export const nextCursorField = z
  .nullable(z.uuid())
  .register(z.globalRegistry, { description: 'Pass as `cursor` to get the next page; null on the last page' });
