import { batchPutItems } from '../../lambdas/shared/table/batch-write';
import { createTestTable } from '../support/table';
import { meterDynamoReads, type ReadMeter, type ReadMeterSnapshot } from '../support/read-meter';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import { listContacts } from '../../lambdas/contexts/contacts/contacts';
import { toItem } from '../../lambdas/contexts/contacts/contact-rows';
import { insertIndex } from '../../lambdas/contexts/contacts/search-rows';
import { drivingTermOf, indexTokenOf, searchTermsOf } from '../../lambdas/contexts/contacts/search-terms';
import type { Contact } from '../../lambdas/contexts/contacts/schemas';

/**
 * Search costs the same at 200 and at 1,000 contacts (the bench goes to 100,000): items examined, read units and calls per
 * request, counted at the DynamoDB client. A filter over the directory (what search was) reads
 * every contact for a rare term and fails this at once.
 */
jest.setTimeout(600_000);

const SMALL = 200;
const LARGE = 1_000;

const QUERIES = {
  rareTerm: 'zebulon',
  commonTerm: 'person',
  twoWords: 'acme pers',
  commonDigits: '415 555',
  rareDigits: '0042',
} as const;

/** The index partitions the queries read: a Query reads its own partition and nothing else. */
const READ_ENTRIES = new Set(Object.values(QUERIES).map((q) => indexTokenOf(drivingTermOf(searchTermsOf(q)))));

/**
 * Contact i of a directory: "Person i" of "Acme" on +1415555xxxx, except one "Zebulon Quist".
 * The rows are the very items createContact writes (`toItem`, `insertIndex`), bulk-written for
 * speed, and of its entries only those in the partitions the queries read (DynamoDB Local writes
 * slowly on a busy machine; what a Query costs depends on its partition alone). Claims are left
 * out: search never reads them.
 */
function contactRows(tenantId: string, i: number): Record<string, unknown>[] {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  const contact: Contact = {
    id: uuidv7(Date.parse(at)),
    tenantId,
    displayName: i === 42 ? 'Zebulon Quist' : `Person ${i}`,
    phoneNumber: `+1415555${String(i).padStart(4, '0')}`,
    company: 'Acme',
    tag: null,
    notes: null,
    createdByAgentId: null,
    createdAt: at,
    updatedAt: at,
    normalizedNumber: `+1415555${String(i).padStart(4, '0')}`,
    isAutoCreated: false,
    source: 'manual',
    consentStatus: 'unknown',
    consentSource: null,
    consentAt: null,
    consentNote: null,
    externalId: null,
    customFields: null,
    version: 1,
  };
  const entries = insertIndex(tenantId, contact.id, contact).writes.map(
    (write) => write.Put!.Item as Record<string, unknown>,
  );
  return [toItem(contact), ...entries.filter((row) => READ_ENTRIES.has((row.pk as string).split('#SEARCH#')[1]))];
}

async function seedDirectory(size: number): Promise<string> {
  const tenantId = uuidv7();
  const rows = Array.from({ length: size }, (_, i) => contactRows(tenantId, i)).flat();
  await batchPutItems(dynamo, TABLE_NAME, rows, 16);
  return tenantId;
}

async function costPerSearch(
  meter: ReadMeter,
  tenantId: string,
): Promise<Record<keyof typeof QUERIES, ReadMeterSnapshot & { found: number }>> {
  const costs = {} as Record<keyof typeof QUERIES, ReadMeterSnapshot & { found: number }>;
  for (const [name, search] of Object.entries(QUERIES) as [keyof typeof QUERIES, string][]) {
    meter.reset();
    const page = await listContacts(tenantId, { search, limit: 50, includeAutoCreated: true });
    costs[name] = { ...meter.snapshot(), found: page.items.length };
  }
  return costs;
}

let small: string;
let large: string;
let meter: ReadMeter;

beforeAll(async () => {
  await createTestTable();
  [small, large] = [await seedDirectory(SMALL), await seedDirectory(LARGE)];
  meter = meterDynamoReads();
});
afterAll(() => meter?.stop());

describe('contact search at two sizes', () => {
  it(`examines as many items at ${LARGE} contacts as at ${SMALL}: rare term, common term, two words, digits`, async () => {
    // Act
    const atSmall = await costPerSearch(meter, small);
    const atLarge = await costPerSearch(meter, large);

    // Assess: same results, same cost; a page of 50 reads 51 entries and 51 contacts at most
    for (const name of Object.keys(QUERIES) as (keyof typeof QUERIES)[]) {
      expect({ name, found: atLarge[name].found }).toEqual({ name, found: atSmall[name].found });
      expect({ name, ...atLarge[name] }).toEqual({ name, ...atSmall[name] });
      expect({ name, examined: atLarge[name].itemsExamined <= 2 * 51 }).toEqual({ name, examined: true });
    }
    expect([atLarge.rareTerm.found, atLarge.commonTerm.found, atLarge.rareDigits.found]).toEqual([1, 50, 1]);
    // The index Query and one batch read of the contacts, which carry their numbers' consent.
    for (const name of Object.keys(QUERIES) as (keyof typeof QUERIES)[])
      expect({ name, calls: atLarge[name].calls }).toEqual({ name, calls: 2 });
  });

  it(`reads a page of the directory in one Query, the same at ${LARGE} contacts as at ${SMALL}, consent included`, async () => {
    // Act
    const page = async (tenantId: string) => {
      meter.reset();
      const { items } = await listContacts(tenantId, { limit: 50, includeAutoCreated: true });
      return { ...meter.snapshot(), found: items.length, consent: items.every((c) => c.consentStatus === 'unknown') };
    };
    const atSmall = await page(small);
    const atLarge = await page(large);
    // Assess
    expect(atLarge).toEqual(atSmall);
    expect(atLarge).toMatchObject({ calls: 1, itemsExamined: 51, found: 50, consent: true });
  });
});
