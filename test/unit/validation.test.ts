import { parseOrThrow } from '../../lambdas/handlers/http/validation';
import { CreateContactBody } from '../../lambdas/contexts/contacts/requests/create-contact';
import { ListCallsQuery } from '../../lambdas/contexts/calls/requests/list-calls';
import { UpdateContactBody } from '../../lambdas/contexts/contacts/requests/update-contact';
import { ValidationError } from '../../lambdas/shared/errors';

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as Error).message;
  }
  throw new Error('expected a validation error');
};

describe('request validation', () => {
  it('defaults limit to 50, clamps above 100 and refuses 0 and non-numbers naming limit', () => {
    expect(parseOrThrow(ListCallsQuery, {}, 'query').limit).toBe(50);
    expect(parseOrThrow(ListCallsQuery, { limit: '500' }, 'query').limit).toBe(100);
    expect(messageOf(() => parseOrThrow(ListCallsQuery, { limit: '0' }, 'query'))).toMatch(/^limit: /);
    expect(messageOf(() => parseOrThrow(ListCallsQuery, { limit: '2.5' }, 'query'))).toMatch(/^limit: /);
  });

  it('clamps a limit above 100 to 100 however many digits it has', () => {
    for (const huge of ['101', '9007199254740993', '1'.repeat(400)]) {
      expect(parseOrThrow(ListCallsQuery, { limit: huge }, 'query').limit).toBe(100);
    }
    expect(parseOrThrow(ListCallsQuery, { limit: '007' }, 'query').limit).toBe(7);
  });

  it('refuses every limit that is not a whole number, naming limit', () => {
    for (const bad of ['', '-1', '+5', '1e3', '1.0', '0x10', ' 5', 'ten', '0000']) {
      expect(messageOf(() => parseOrThrow(ListCallsQuery, { limit: bad }, 'query'))).toMatch(/^limit: /);
    }
  });

  it('names direction, since and cursor when they are malformed', () => {
    expect(messageOf(() => parseOrThrow(ListCallsQuery, { direction: 'sideways' }, 'query'))).toMatch(/^direction: /);
    expect(messageOf(() => parseOrThrow(ListCallsQuery, { since: 'yesterday' }, 'query'))).toMatch(/^since: /);
    expect(messageOf(() => parseOrThrow(ListCallsQuery, { cursor: 'abc' }, 'query'))).toMatch(/^cursor: /);
  });

  it('accepts since with an offset, as any ISO 8601 instant', () => {
    expect(parseOrThrow(ListCallsQuery, { since: '2026-01-01T10:00:00+02:00' }, 'query').since).toBe(
      '2026-01-01T10:00:00+02:00',
    );
  });

  it('names an unknown body field so a misspelling cannot look like success', () => {
    const message = messageOf(() =>
      parseOrThrow(CreateContactBody, { displayName: 'A', phoneNumber: '+14155550100', nickname: 'x' }, 'body'),
    );

    expect(message).toBe('body.nickname: unknown field');
  });

  it('names a missing required field and a bad phone number', () => {
    expect(messageOf(() => parseOrThrow(CreateContactBody, { phoneNumber: '+14155550100' }, 'body'))).toBe(
      'body.displayName: is required',
    );
    expect(messageOf(() => parseOrThrow(CreateContactBody, { displayName: 'A', phoneNumber: '0123' }, 'body'))).toMatch(
      /^body\.phoneNumber: must be an E\.164/,
    );
  });

  it('refuses an empty PATCH body naming the body', () => {
    expect(messageOf(() => parseOrThrow(UpdateContactBody, {}, 'body'))).toBe('body: must contain at least one field');
  });

  it('enforces the length limits of the spec', () => {
    expect(messageOf(() => parseOrThrow(UpdateContactBody, { tag: 'x'.repeat(61) }, 'body'))).toMatch(/^body\.tag: /);
    expect(messageOf(() => parseOrThrow(UpdateContactBody, { notes: 'x'.repeat(5001) }, 'body'))).toMatch(
      /^body\.notes: /,
    );
    expect(parseOrThrow(UpdateContactBody, { company: null }, 'body')).toEqual({ company: null });
  });
});
