import type { LimitsProxy } from '../../local/dynamodb-limits/limits-proxy';
import type * as ContactsModule from '../../lambdas/contexts/contacts/contacts';
import { pollUntil } from '../e2e/support/poll';

/**
 * Read-your-writes (issue 38, part 7) on a limits-faithful engine of this file's own with AWS's
 * eventual consistency turned on (docs/local-engine.md, "Eventual consistency"): an eventually
 * consistent read and every index query miss a write for `LAG_MS`. DynamoDB Local answers both
 * consistently, so only here can a contact created by an answered request be looked for at once
 * the way a CRM does: by its external id, by its id, then PATCHed and DELETEd, each without a 404.
 */
jest.setTimeout(120_000);

/** Longer than the test takes to reach its reads, so a lagging read is certain to miss the write. */
const LAG_MS = 3_000;

let engine: LimitsProxy;
let contacts: typeof ContactsModule;
let ids: typeof import('../../lambdas/shared/ids');
let aws: typeof import('../../lambdas/shared/aws');
let lib: typeof import('@aws-sdk/lib-dynamodb');

beforeAll(async () => {
  const { startLimitsProxy } = await import('../../local/dynamodb-limits/limits-proxy');
  const upstream = process.env.DYNAMODB_LOCAL_ENDPOINT;
  if (!upstream)
    throw new Error('DYNAMODB_LOCAL_ENDPOINT is not set: run integration tests through the jest integration projects');
  engine = await startLimitsProxy({ upstream, sharedDb: false, replicaLagMs: LAG_MS, transactionHoldMs: 0 });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  const { createTestTable } = await import('../support/table');
  await createTestTable();
  contacts = await import('../../lambdas/contexts/contacts/contacts');
  ids = await import('../../lambdas/shared/ids');
  aws = await import('../../lambdas/shared/aws');
  lib = await import('@aws-sdk/lib-dynamodb');
}, 120_000);

afterAll(() => engine?.stop());

describe('the engine with a replica lag', () => {
  it('answers an eventually consistent read and an index query from before a write until the lag has passed', async () => {
    // Prepare
    const { GetCommand, PutCommand, QueryCommand } = lib;
    const { dynamo, TABLE_NAME } = aws;
    const key = { pk: `LAG#${ids.uuidv7()}`, sk: 'ROW' };
    const indexPk = `LAGIDX#${ids.uuidv7()}`;
    const get = (consistent: boolean) =>
      dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: consistent }));
    const query = () =>
      dynamo.send(
        new QueryCommand({
          TableName: TABLE_NAME,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': indexPk },
        }),
      );

    // Act
    await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: { ...key, gsi1pk: indexPk, gsi1sk: 'A', v: 1 } }));
    const [eventual, strong, indexed] = await Promise.all([get(false), get(true), query()]);

    // Assess: the write is there for a strong read only, then for every read once the lag has passed
    expect(eventual.Item).toBeUndefined();
    expect(strong.Item).toMatchObject({ v: 1 });
    expect(indexed.Items).toEqual([]);
    await pollUntil('the index entry', query, (page) => (page.Items ?? []).length === 1, LAG_MS * 3);
    expect((await get(false)).Item).toMatchObject({ v: 1 });
  });
});

describe('a contact created by an answered request', () => {
  it('is found at once by external id and by id, patched and deleted without a 404 (20 creates)', async () => {
    // Prepare
    const tenantId = ids.uuidv7();
    const found: string[] = [];

    // Act: each create answered, then at once what a CRM does with it
    for (let i = 0; i < 20; i += 1) {
      const externalId = `ryw-${i}`;
      const { contact } = await contacts.createContact(tenantId, {
        displayName: `Person ${i}`,
        phoneNumber: `+1628555${String(1000 + i)}`,
        externalId,
      });
      const page = await contacts.listContacts(tenantId, { limit: 50, includeAutoCreated: false, externalId });
      expect(page.items.map((c) => c.id)).toEqual([contact.id]);
      expect((await contacts.getContact(tenantId, contact.id)).externalId).toBe(externalId);
      const patched = await contacts.updateContact(tenantId, contact.id, { notes: `patched ${i}` });
      expect(patched.notes).toBe(`patched ${i}`);
      found.push(contact.id);
    }
    const { contact: doomed } = await contacts.createContact(tenantId, {
      displayName: 'Deleted at once',
      phoneNumber: '+16285552000',
    });
    await contacts.deleteContact(tenantId, doomed.id);

    // Assess: the deleted one is gone for a strong read
    expect(found).toHaveLength(20);
    await expect(contacts.getContact(tenantId, doomed.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});
