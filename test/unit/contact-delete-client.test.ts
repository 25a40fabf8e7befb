import { ContactDeleteError, createClient, type DeleteContact } from '../../clients/typescript/src';

/**
 * The typed client's batch delete (clients/typescript/src/contact-delete.ts) against a fake `POST /contacts/batch/delete`:
 * 100 contacts to a request, each with its own Idempotency-Key (the same on a retry), every contact answered in
 * source order, `unavailable` ones sent again, a 429 waited out, and a contact that stays unavailable named.
 */
type Sent = { path: string; key: string | null; contacts: DeleteContact[] };
type Fake = { sent: Sent[]; fetch: (request: Request) => Promise<Response> };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

/** Answers each item `deleted`, except those `busyTimes` says are busy (unavailable) that many more times. */
function fakeDelete(busyTimes: Map<string, number> = new Map(), first429 = false): Fake {
  const sent: Sent[] = [];
  let refused = !first429;
  return {
    sent,
    fetch: async (request: Request) => {
      const { contacts } = (await request.json()) as { contacts: DeleteContact[] };
      sent.push({ path: new URL(request.url).pathname, key: request.headers.get('Idempotency-Key'), contacts });
      if (!refused) {
        refused = true;
        return json(429, { error: 'Too many requests', code: 'rate_limited' }, { 'Retry-After': '0' });
      }
      const results = contacts.map((contact, index) => {
        const name = 'id' in contact ? contact.id : contact.externalId;
        const left = busyTimes.get(name) ?? 0;
        if (left > 0) busyTimes.set(name, left - 1);
        const busy = left > 0;
        return {
          index,
          status: busy ? 'unavailable' : 'deleted',
          contactId: 'id' in contact ? contact.id : '01900000-0000-7000-8000-000000000000',
          externalId: 'externalId' in contact ? contact.externalId : null,
          error: busy ? `contacts[${index}]: too busy, send it again` : null,
          code: busy ? 'temporarily_unavailable' : null,
        };
      });
      return json(200, { results });
    },
  };
}

const byExternalId = (count: number): DeleteContact[] =>
  Array.from({ length: count }, (_, i) => ({ externalId: `crm-${i}` }));

describe('contacts.deleteMany', () => {
  it('sends 100 to a request, each with its own Idempotency-Key, and answers every contact in source order', async () => {
    // Prepare
    const fake = fakeDelete();
    const client = createClient({ baseUrl: 'http://api.test/api/v1', apiKey: 'k', fetch: fake.fetch });

    // Act
    const report = await client.contacts.deleteMany(byExternalId(150));

    // Assess
    expect(fake.sent.map((s) => [s.path, s.contacts.length])).toEqual([
      ['/api/v1/contacts/batch/delete', 100],
      ['/api/v1/contacts/batch/delete', 50],
    ]);
    expect(new Set(fake.sent.map((s) => s.key)).size).toBe(2);
    expect(report.results.map((r) => [r.index, r.externalId])).toEqual(
      byExternalId(150).map((c, i) => [i, (c as { externalId: string }).externalId]),
    );
    expect(report).toMatchObject({ counts: { deleted: 150 }, requests: 2 });
  });

  it('waits out a 429 and sends the same request again with the same key, and sends unavailable contacts again', async () => {
    // Prepare: the first request refused; one contact busy once
    const fake = fakeDelete(new Map([['crm-1', 1]]), true);
    const client = createClient({ baseUrl: 'http://api.test/api/v1', apiKey: 'k', fetch: fake.fetch });

    // Act
    const report = await client.contacts.deleteMany([
      ...byExternalId(2),
      { id: '01900000-0000-7000-8000-0000000000aa' },
    ]);

    // Assess
    expect(fake.sent).toHaveLength(3);
    expect(fake.sent[1].key).toBe(fake.sent[0].key);
    expect(fake.sent[2].contacts).toEqual([{ externalId: 'crm-1' }]);
    expect(fake.sent[2].key).not.toBe(fake.sent[0].key);
    expect(report.results.map((r) => [r.index, r.status])).toEqual([
      [0, 'deleted'],
      [1, 'deleted'],
      [2, 'deleted'],
    ]);
  });

  it('rejects with ContactDeleteError naming a contact still unavailable after its attempts', async () => {
    // Prepare
    const fake = fakeDelete(new Map([['crm-1', 99]]));
    const client = createClient({ baseUrl: 'http://api.test/api/v1', apiKey: 'k', fetch: fake.fetch });

    // Act
    const outcome = await client.contacts.deleteMany(byExternalId(3), { maxAttempts: 2 }).catch((err: unknown) => err);

    // Assess
    expect(outcome).toBeInstanceOf(ContactDeleteError);
    const error = outcome as ContactDeleteError;
    expect([error.unavailable, error.code, error.nextIndex]).toEqual([[1], 'temporarily_unavailable', 1]);
    expect(error.results.map((r) => r.status)).toEqual(['deleted', 'unavailable', 'deleted']);
  });
});
