import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { handler as upsertContacts } from '../../lambdas/handlers/api/upsert-contacts';
import { handler as listContacts } from '../../lambdas/handlers/api/list-contacts';
import { handler as updateContact } from '../../lambdas/handlers/api/update-contact';
import { handler as deleteContacts } from '../../lambdas/handlers/api/delete-contacts';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';
import { externalIdClaimKey } from '../../lambdas/contexts/contacts/contact-rows';
import { uuidv7LowerBound } from '../../lambdas/shared/ids';
import { ContactBatchItem } from '../../lambdas/contexts/contacts/requests/upsert-contacts';

/**
 * The batch and the directory's new list parameters at the edge (issue 32), against a mocked
 * table: what is validated where, what is read and written, what one request costs the key.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const principal = aPrincipal();
const tenant = principal.tenant.id;

beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } }); // the per-key limiter
  ddb.on(BatchGetCommand).resolves({ Responses: {} }); // no claims, no ledger rows
  ddb.on(GetCommand).resolves({});
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(QueryCommand).resolves({ Items: [] });
});

const batch = (contacts: unknown, headers: Record<string, string> = {}) =>
  upsertContacts(
    apiEvent({
      method: 'POST',
      resource: '/api/v1/contacts/batch',
      body: JSON.stringify({ contacts }),
      headers: { ...jsonHeaders, ...headers },
      principal,
    }),
    lambdaContext,
  );

const rateLimitCounts = () =>
  ddb.commandCalls(UpdateCommand).filter((call) => String(call.args[0].input.Key?.pk).includes('#RATE#')).length;

describe('POST /contacts/batch', () => {
  it('answers a bad item at its index naming its field, and writes the others', async () => {
    // Act
    const result = await batch([
      { displayName: 'Ada', phoneNumber: '0800 FLOWERS' },
      { displayName: 'Grace', phoneNumber: '+14155550101', nickname: 'Amazing' },
      { displayName: 'Alan', phoneNumber: '+14155550102', customFields: { 'bad key!': 'x' } },
      { displayName: 'Barbara', phoneNumber: '+14155550103', externalId: 'crm-4' },
    ]);

    // Assess
    expect(result.statusCode).toBe(200);
    const { results } = bodyOf(result);
    expect(
      results.map((r: { index: number; status: string; error: string | null }) => [r.index, r.status, r.error]),
    ).toEqual([
      [0, 'invalid', 'contacts[0].phoneNumber: must be an E.164 phone number such as +14155550123'],
      [1, 'invalid', 'contacts[1].nickname: unknown field'],
      [2, 'invalid', expect.stringMatching(/^contacts\[2\]\.customFields\.bad key!: key must be/)],
      [3, 'created', null],
    ]);
    // One transaction: the valid item's claims, contact, consent check and search entries.
    const [write] = ddb.commandCalls(TransactWriteCommand);
    const puts = write.args[0].input.TransactItems!.flatMap((item) => (item.Put ? [item.Put.Item!.pk as string] : []));
    expect(puts).toEqual(expect.arrayContaining([`T#${tenant}#NUMBER#+14155550103`, `T#${tenant}#EXTERNAL_ID#crm-4`]));
    expect(puts.some((pk) => pk.includes('+14155550101') || pk.includes('+14155550102'))).toBe(false);
  });

  it('counts one request against the rate limit for 100 contacts, and takes a body larger than 64 KiB', async () => {
    // Prepare: 100 contacts with long notes, about 110 KB
    const contacts = Array.from({ length: 100 }, (_, i) => ({
      displayName: `Contact ${i}`,
      phoneNumber: `+1415555${String(i).padStart(4, '0')}`,
      notes: 'n'.repeat(1000),
    }));

    // Act
    const result = await batch(contacts);

    // Assess
    expect(JSON.stringify({ contacts }).length).toBeGreaterThan(64 * 1024);
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result).results).toHaveLength(100);
    expect(rateLimitCounts()).toBe(1);
  });

  it.each([
    ['no contacts', [], 'body.contacts: Too small: expected array to have >=1 items'],
    [
      '101 contacts',
      Array.from({ length: 101 }, () => ({})),
      'body.contacts: Too big: expected array to have <=100 items',
    ],
    ['not a list', { displayName: 'Ada' }, 'body.contacts: Invalid input: expected array, received object'],
  ])('refuses %s with 400 naming the field, writing nothing', async (_case, contacts, error) => {
    const result = await batch(contacts);

    expect([result.statusCode, bodyOf(result).error]).toEqual([400, error]);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
  });

  it('refuses a body over 4 MiB with 413 before reading it', async () => {
    const result = await batch([
      { displayName: 'Ada', phoneNumber: '+14155550100', notes: 'x'.repeat(4 * 1024 * 1024) },
    ]);

    expect(result.statusCode).toBe(413);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
  });
});

describe('POST /contacts/batch/delete', () => {
  const batchDelete = (body: unknown) =>
    deleteContacts(
      apiEvent({
        method: 'POST',
        resource: '/api/v1/contacts/batch/delete',
        body: JSON.stringify(body),
        headers: jsonHeaders,
        principal,
      }),
      lambdaContext,
    );

  it('answers each malformed item invalid at its index naming its field, and runs the others', async () => {
    // Prepare: no contact has the well-formed id (the mocked table finds nothing)
    const id = '0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9d';

    // Act
    const result = await batchDelete({
      contacts: [
        {},
        { id, externalId: 'crm-1' },
        { id: 'not-an-id' },
        { externalId: 'crm-2', displayName: 'Ada' },
        'crm-3',
        { externalId: '' },
        { id },
      ],
    });

    // Assess
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result).results.map((r: { status: string; error: string | null }) => [r.status, r.error])).toEqual([
      ['invalid', 'contacts[0].id: is required (or externalId)'],
      ['invalid', 'contacts[1].externalId: cannot be combined with id'],
      ['invalid', 'contacts[2].id: Invalid UUID'],
      ['invalid', 'contacts[3].displayName: unknown field'],
      ['invalid', 'contacts[4]: Invalid input: expected object, received string'],
      ['invalid', 'contacts[5].externalId: Too small: expected string to have >=1 characters'],
      ['not_found', 'contacts[6].id: no contact has this id'],
    ]);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
    expect(rateLimitCounts()).toBe(1);
  });

  it.each([
    ['no contacts', { contacts: [] }, 'body.contacts: Too small: expected array to have >=1 items'],
    [
      '101 contacts',
      { contacts: Array.from({ length: 101 }, () => ({})) },
      'body.contacts: Too big: expected array to have <=100 items',
    ],
    ['not a list', { contacts: { id: 'x' } }, 'body.contacts: Invalid input: expected array, received object'],
    ['no list at all', {}, 'body.contacts: is required'],
    ['an unknown field', { contacts: [{}], ids: [] }, 'body.ids: unknown field'],
  ])('refuses %s with 400 naming the field, deleting nothing', async (_case, body, error) => {
    const result = await batchDelete(body);

    expect([result.statusCode, bodyOf(result).error]).toEqual([400, error]);
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 0);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
  });
});

describe('GET /contacts, the new parameters', () => {
  const list = (query: Record<string, string>) =>
    listContacts(apiEvent({ resource: '/api/v1/contacts', query, principal }), lambdaContext);

  it('reads a page of the feed of changes with one Query of limit + 1 entries of the changes index, from updatedSince', async () => {
    // Prepare: a time inside the 30 days deletions are kept, whenever the test runs
    const since = Date.now() - 3 * 24 * 3600 * 1000;

    // Act
    const result = await list({ updatedSince: new Date(since).toISOString(), limit: '20', includeDeleted: 'true' });

    // Assess
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      contacts: [],
      nextCursor: null,
      deletedContacts: [],
      nextUpdatedSince: expect.any(String),
    });
    expect(ddb).toHaveReceivedCommandTimes(QueryCommand, 1);
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'changes',
      KeyConditionExpression: '#pk = :pk AND #change > :after',
      ExpressionAttributeValues: { ':pk': `T#${tenant}#CONTACT_CHANGES`, ':after': uuidv7LowerBound(since) },
      ScanIndexForward: true,
      Limit: 21,
    });
  });

  it('finds a contact by external id by reading its claim by key, strongly consistent, never the lagging index', async () => {
    // Act
    const result = await list({ externalId: 'hs-42' });

    // Assess: no claim, no contact, and no index query
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({ contacts: [], nextCursor: null });
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      Key: externalIdClaimKey(tenant, 'hs-42'),
      ConsistentRead: true,
    });
    expect(ddb).toHaveReceivedCommandTimes(QueryCommand, 0);
  });

  it.each([
    [{ includeDeleted: 'true' }, 'includeDeleted: applies only with updatedSince'],
    [{ externalId: 'hs-42', search: 'ada' }, 'search: cannot be combined with externalId'],
    [{ updatedSince: '2026-11-01T00:00:00Z', search: 'ada' }, 'search: cannot be combined with updatedSince'],
    [{ updatedSince: 'yesterday' }, 'updatedSince: Invalid ISO datetime'],
  ])('refuses %j with 400 naming the parameter', async (query, error) => {
    const result = await list(query);

    expect([result.statusCode, bodyOf(result).error]).toEqual([400, error]);
    expect(ddb).toHaveReceivedCommandTimes(QueryCommand, 0);
  });
});

describe('a customFields key JavaScript cannot hold (issue 38, part 9)', () => {
  // The raw JSON: an object literal in code would set a prototype rather than a key named __proto__.
  const body = '{"customFields":{"__proto__":"x","stage":"lead"}}';

  it('is refused by PATCH with 400 naming it, and nothing is written', async () => {
    // Act
    const result = await updateContact(
      apiEvent({
        method: 'PATCH',
        resource: '/api/v1/contacts/{id}',
        pathParameters: { id: '0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9d' },
        body,
        headers: jsonHeaders,
        principal,
      }),
      lambdaContext,
    );

    // Assess
    expect([result.statusCode, bodyOf(result).error]).toEqual([
      400,
      'body: the key "__proto__" is reserved (at any depth)',
    ]);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
  });

  it('is refused by the batch with 400 naming it, never an item stored without it', async () => {
    // Act
    const result = await upsertContacts(
      apiEvent({
        method: 'POST',
        resource: '/api/v1/contacts/batch',
        body: `{"contacts":[{"displayName":"Ada","phoneNumber":"+14155550100",${body.slice(1, -1)}}]}`,
        headers: jsonHeaders,
        principal,
      }),
      lambdaContext,
    );

    // Assess
    expect([result.statusCode, bodyOf(result).error]).toEqual([
      400,
      'body: the key "__proto__" is reserved (at any depth)',
    ]);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 0);
  });

  it('is refused by the item schema too, for a caller that parsed the JSON itself', () => {
    // Act
    const parsed = ContactBatchItem.safeParse(
      JSON.parse(`{"displayName":"Ada","phoneNumber":"+14155550100",${body.slice(1, -1)}}`),
    );

    // Assess
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['customFields', '__proto__'],
      message: 'is a reserved key',
    });
  });
});
