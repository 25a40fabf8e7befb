import { ContactImportError, createClient, type ImportContact } from '../../clients/typescript/src';

/**
 * The typed client's import (clients/typescript/src/contact-import.ts) against a fake API: a contact the service
 * keeps answering `unavailable` makes the import reject, naming it, once its attempts are spent.
 */
type BatchBody = { contacts: ImportContact[] };

/** A fake POST /contacts/batch: every contact created, except `stuck`'s, which is always unavailable. */
function fakeBatch(stuck: string, sent: string[][]) {
  return async (request: Request): Promise<Response> => {
    const { contacts } = (await request.json()) as BatchBody;
    sent.push(contacts.map((c) => c.externalId as string));
    const results = contacts.map((contact, index) => {
      const busy = contact.externalId === stuck;
      return {
        index,
        status: busy ? 'unavailable' : 'created',
        contactId: busy ? null : '01900000-0000-7000-8000-000000000000',
        externalId: contact.externalId ?? null,
        error: busy ? `contacts[${index}]: too busy, send it again` : null,
        code: busy ? 'temporarily_unavailable' : null,
      };
    });
    return new Response(JSON.stringify({ results }), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
}

const people = (count: number): ImportContact[] =>
  Array.from({ length: count }, (_, i) => ({
    displayName: `Person ${i}`,
    phoneNumber: `+1415555${String(1000 + i)}`,
    externalId: `p-${i}`,
  }));

describe('importContacts', () => {
  it('rejects when a contact is still unavailable after its attempts, naming it', async () => {
    // Prepare
    const sent: string[][] = [];
    const client = createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch: fakeBatch('p-1', sent) });

    // Act
    const outcome = await client.contacts.import(people(3), { maxAttempts: 2 }).catch((err: unknown) => err);

    // Assess: sent twice (its two attempts), then refused by name; the others were answered
    expect(outcome).toBeInstanceOf(ContactImportError);
    const error = outcome as ContactImportError;
    expect(error.unavailable).toEqual([1]);
    expect(error.message).toContain('source positions 1');
    expect(error.code).toBe('temporarily_unavailable');
    expect(error.nextIndex).toBe(1);
    expect(error.results.map((r) => r.status)).toEqual(['created', 'unavailable', 'created']);
    expect(sent).toEqual([['p-0', 'p-1', 'p-2'], ['p-1']]);
  });

  it('resolves when every contact was answered', async () => {
    // Prepare
    const client = createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch: fakeBatch('none', []) });

    // Act
    const report = await client.contacts.import(people(3));

    // Assess
    expect(report.counts).toEqual({ created: 3 });
  });
});
