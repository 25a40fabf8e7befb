import type { z } from 'zod/mini';
import { ValidationError } from '../../shared/errors';

/**
 * Turns the first zod issue into the spec's 400: `error` names the failing field, e.g.
 * `limit: must be a whole number from 1 to 100` or `body.nickname: unknown field`.
 */
export function validationMessage(error: z.core.$ZodError, where: 'query' | 'path' | 'body'): string {
  const issue = error.issues[0];
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => [...path, key].join('.'));
    const field = where === 'body' ? names.map((n) => `body.${n}`).join(', ') : names.join(', ');
    return `${field}: unknown ${issue.keys.length > 1 ? 'fields' : 'field'}`;
  }
  const field = path.length === 0 ? where : where === 'body' ? `body.${path.join('.')}` : path.join('.');
  return `${field}: ${issueText(issue)}`;
}

/** What is wrong, without the field (the caller names it once): a missing value is "is required". */
export const issueText = (issue: z.core.$ZodIssue): string =>
  issue.code === 'invalid_type' && issue.message.includes('received undefined') ? 'is required' : issue.message;

export function parseOrThrow<T extends z.ZodMiniType>(schema: T, value: unknown, where: 'query' | 'path' | 'body'): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(validationMessage(result.error, where));
  return result.data;
}
