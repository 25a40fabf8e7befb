import * as z from 'zod/mini';
import './zod-english';

/**
 * `limit`: default 50, at least 1, above 100 clamped to 100 (spec section 4). Query values arrive
 * as strings; anything that is not a whole number is refused.
 */
const pageSize = z.pipe(
  z.pipe(z.string().check(z.regex(/^\d+$/, 'must be a whole number from 1 to 100')), z.transform(Number)),
  z.int().check(z.gte(1, 'must be at least 1')),
);
const clampedPageSize = z.pipe(pageSize, z.transform((n: number) => Math.min(n, 100)));

export const limitParam = z
  .pipe(z.optional(clampedPageSize), z.transform((n: number | undefined) => n ?? 50))
  .register(z.globalRegistry, { description: 'Page size; default 50, 1 to 100, larger values are clamped to 100' });

export const cursorParam = z.optional(z.uuid()).register(z.globalRegistry, { description: 'The nextCursor of the previous page' });
