import * as z from 'zod/mini';
import './zod-english';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/**
 * `limit`: default 50, at least 1, above 100 clamped to 100 (spec sections 4 and 8), however many
 * digits it has: the clamp comes before the integer check, so `1e30` written out in digits is 100,
 * not a 400. Query values arrive as strings; anything but digits (a sign, a point, an exponent) is
 * refused naming `limit`.
 */
const pageSize = z.pipe(
  z.pipe(
    z
      .string()
      .check(
        z.regex(
          /^\d+$/,
          `must be a whole number (1 to ${MAX_PAGE_SIZE}; larger values are clamped to ${MAX_PAGE_SIZE})`,
        ),
      ),
    // Number() of a very long digit string is Infinity or a float past 2^53: both clamp to 100.
    z.transform((digits: string) => Math.min(Number(digits), MAX_PAGE_SIZE)),
  ),
  z.int().check(z.gte(1, 'must be at least 1')),
);

/**
 * Query strings carry text, so the validator reads `limit` as digits; clients and generated SDKs
 * see what it means, an integer. No `maximum`: larger values are accepted (and clamped), and a
 * client that validates against the document must not refuse them. The OpenAPI generator
 * documents a parameter by this `documentedAs` schema when one is registered.
 */
const limitDocumentedAs = { type: 'integer', minimum: 1, default: DEFAULT_PAGE_SIZE };

export const limitParam = z
  .pipe(
    z.optional(pageSize),
    z.transform((n: number | undefined) => n ?? DEFAULT_PAGE_SIZE),
  )
  .register(z.globalRegistry, {
    description: `Page size; default ${DEFAULT_PAGE_SIZE}, 1 to ${MAX_PAGE_SIZE}, larger values are clamped to ${MAX_PAGE_SIZE}`,
    documentedAs: limitDocumentedAs,
  });

export const cursorParam = z
  .optional(z.uuid())
  .register(z.globalRegistry, { description: 'The nextCursor of the previous page' });
