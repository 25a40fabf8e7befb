import type { z } from 'zod/mini';
import { ValidationError } from '../../shared/errors';

/**
 * Turns the first zod issue into the spec's 400: `error` names the failing field, e.g.
 * `limit: must be a whole number from 1 to 100` or `body.nickname: unknown field`.
 */
export function validationMessage(error: z.core.$ZodError, where: 'query' | 'path' | 'body'): string {
  return validationMessageAt(error, where === 'body' ? 'body' : undefined, where);
}

/**
 * The same for a value inside a request: fields named under `prefix` (`contacts[3]` gives
 * `contacts[3].phoneNumber: ...`, as a batch answers its items); without one, by their own names.
 */
export function validationMessageAt(
  error: z.core.$ZodError,
  prefix: string | undefined,
  whole = prefix ?? 'value',
): string {
  const issue = error.issues[0];
  const path = issue.path.map(String);
  const named = (parts: string[]) => (prefix === undefined ? parts.join('.') : [prefix, ...parts].join('.'));
  if (issue.code === 'unrecognized_keys') {
    return `${issue.keys.map((key) => named([...path, key])).join(', ')}: unknown ${issue.keys.length > 1 ? 'fields' : 'field'}`;
  }
  return `${path.length === 0 ? whole : named(path)}: ${issueText(issue)}`;
}

/** What is wrong, without the field (the caller names it once): a missing value is "is required". */
export const issueText = (issue: z.core.$ZodIssue): string =>
  issue.code === 'invalid_type' && issue.message.includes('received undefined') ? 'is required' : issue.message;

export function parseOrThrow<T extends z.ZodMiniType>(
  schema: T,
  value: unknown,
  where: 'query' | 'path' | 'body',
): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(validationMessage(result.error, where));
  return result.data;
}

/**
 * Path parameters as the client meant them. API Gateway REST hands them over percent-encoded, as
 * sent (`%2B14155550123` for `+14155550123`); each is decoded exactly once. A value that is
 * already plain decodes to itself, since no valid parameter of this API (a uuid, an E.164 number)
 * contains `%`, so the answer is the same whether a client encoded or not. A malformed escape is a
 * 400 naming the parameter.
 */
export function decodePathParameters(
  raw: Record<string, string | undefined> | null | undefined,
): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (value === undefined) continue;
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      throw new ValidationError(`${name}: malformed percent-encoding in the path`);
    }
  }
  return decoded;
}
