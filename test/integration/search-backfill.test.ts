import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import { contactKey, createContact, listContacts } from '../../lambdas/contexts/contacts/contacts';
import { searchBackfill } from '../../local/admin/commands/search';

jest.setTimeout(120_000);
const context = { stateDir: '.local', runtime: undefined, emit: () => undefined, signal: new AbortController().signal };
type Result = { pages: number; indexed: number; alreadyIndexed: number; nextCursor: string | null };
const backfill = async (values: Record<string, string> = {}) => (await searchBackfill.run(searchBackfill.parse({ values, positionals: [] }), context)) as Result;

/** A contact row as the service stored it before the search index: lower-cased copies, no search rows. */
async function legacyContact(tenantId: string, displayName: string, number: string): Promise<string> {
  const id = uuidv7();
  await dynamo.send(new PutCommand({
    TableName: TABLE_NAME,
    Item: {
      ...contactKey(tenantId, id), type: 'contact', id, tenantId, displayName, phoneNumber: number, normalizedNumber: number, company: 'Legacy Ltd',
      isAutoCreated: false, source: 'manual', createdAt: '2026-10-01T00:00:00.000Z', updatedAt: '2026-10-01T00:00:00.000Z',
      searchName: displayName.toLowerCase(), searchCompany: 'legacy ltd', searchDigits: number.slice(1),
    },
  }));
  return id;
}

const found = async (tenantId: string, search: string) =>
  (await listContacts(tenantId, { search, limit: 50, includeAutoCreated: true })).items.map((c) => c.displayName).sort();

beforeAll(createTestTable);

describe('npm run admin -- search backfill', () => {
  it('files contacts written before the index under their entries, resumes from its cursor and writes nothing the second time', async () => {
    // Prepare: three contacts from before the index, one written since
    const tenantId = uuidv7();
    const legacyIds = [await legacyContact(tenantId, 'Old Timer', '+14155557101'), await legacyContact(tenantId, 'Olde Worlde', '+14155557102'), await legacyContact(tenantId, 'Vintage', '+14155557103')];
    await createContact(tenantId, { displayName: 'Newcomer', phoneNumber: '+14155557104', company: 'Legacy Ltd' });
    const before = await found(tenantId, 'legacy');

    // Act: one page of two rows, then on from the cursor it printed, then the whole table again
    const first = await backfill({ 'page-size': '2', pages: '1' });
    const rest = await backfill({ cursor: first.nextCursor as string });
    const again = await backfill();

    // Assess
    expect(before).toEqual(['Newcomer']);
    expect(first).toMatchObject({ pages: 1, nextCursor: expect.any(String) });
    expect(first.indexed + rest.indexed).toBe(3);
    expect(rest.nextCursor).toBeNull();
    expect(again).toMatchObject({ indexed: 0, nextCursor: null });
    expect(await found(tenantId, 'legacy')).toEqual(['Newcomer', 'Old Timer', 'Olde Worlde', 'Vintage']);
    expect(await found(tenantId, 'old')).toEqual(['Old Timer', 'Olde Worlde']);
    expect(await found(tenantId, '7103')).toEqual(['Vintage']);
    const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, legacyIds[0]) }));
    expect(Item).toMatchObject({ searchIndex: expect.any(String), updatedAt: '2026-10-01T00:00:00.000Z' });
    expect(Item).not.toHaveProperty('searchName');
  });

  it('refuses a cursor it did not print', () => {
    expect(() => searchBackfill.parse({ values: { cursor: 'not-a-cursor' }, positionals: [] })).toThrow('--cursor: must be a cursor printed by an earlier run');
  });
});
