import { randomUUID } from 'node:crypto';
import { createTestTable } from '../support/table';
import { meterDynamoReads, type ReadMeter, type ReadMeterSnapshot } from '../support/read-meter';
import { numberFor, seedConversation, seedThreads } from '../support/scale-seed';
import { listMessages } from '../../lambdas/contexts/texting/messages';
import { listThreads } from '../../lambdas/contexts/texting/threads';
import { ensureDemoOrganization } from '../../local/demo';

/**
 * Cost per request must not grow with the organization: the same requests against a small and a
 * large organization on one table examine the same items, in the same number of calls. Items are
 * counted at the DynamoDB client (ScannedCount), so a filter or a loop over the partition shows.
 */
const SMALL = { threads: 200, conversation: 200 };
const LARGE = { threads: 1_000, conversation: 600 };
const LIMIT = 50;
const CONVERSATION_WITH = '+14155550199';

const small = randomUUID();
const large = randomUUID();
let meter: ReadMeter;

async function measure(request: () => Promise<unknown>): Promise<ReadMeterSnapshot> {
  meter.reset();
  await request();
  return meter.snapshot();
}

/** The first page, then the page after it: both must cost O(limit). */
async function twoPages<T extends { nextCursor: string | null }>(read: (cursor?: string) => Promise<T>) {
  const first = await measure(() => read());
  const page = await read();
  const next = await measure(() => read(page.nextCursor!));
  return { first, next };
}

beforeAll(async () => {
  await createTestTable();
  await Promise.all([
    seedThreads(small, SMALL.threads),
    seedThreads(large, LARGE.threads),
    seedConversation(small, CONVERSATION_WITH, SMALL.conversation),
    seedConversation(large, CONVERSATION_WITH, LARGE.conversation),
  ]);
  meter = meterDynamoReads();
}, 600_000);

afterAll(() => meter.stop());

describe('reads per request do not grow with the organization', () => {
  it(`GET /messages examines limit + 1 index entries and reads limit threads per page at ${SMALL.threads} and at ${LARGE.threads} threads`, async () => {
    // Act
    const threadsOf = (tenantId: string) => (cursor?: string) => listThreads(tenantId, { limit: LIMIT, cursor });
    const atSmall = await twoPages(threadsOf(small));
    const atLarge = await twoPages(threadsOf(large));
    // Assess
    // One Query of the index (its keys, one ahead), one BatchGetItem of the page's threads.
    for (const cost of [atSmall.first, atSmall.next, atLarge.first, atLarge.next]) {
      expect(cost).toMatchObject({ calls: 2, itemsExamined: LIMIT + 1 + LIMIT });
    }
    expect(atLarge.first.readUnits).toBeLessThanOrEqual(atSmall.first.readUnits * 1.25);
    expect(atLarge.next.readUnits).toBeLessThanOrEqual(atSmall.next.readUnits * 1.25);
  });

  it('GET /messages pages through every thread once, newest activity first', async () => {
    // Act: follow nextCursor to the end.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listThreads(small, { limit: 100, cursor });
      seen.push(...page.items.map((thread) => thread.lastAt));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    // Assess: 200 seeded threads plus the conversation's.
    expect(seen).toHaveLength(SMALL.threads + 1);
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  it(`a conversation page examines limit + 1 messages at ${SMALL.conversation} and at ${LARGE.conversation} messages`, async () => {
    // Act
    const conversationOf = (tenantId: string) => (cursor?: string) =>
      listMessages(tenantId, CONVERSATION_WITH, { limit: LIMIT, cursor });
    const atSmall = await twoPages(conversationOf(small));
    const atLarge = await twoPages(conversationOf(large));
    // Assess
    for (const cost of [atSmall.first, atSmall.next, atLarge.first, atLarge.next]) {
      expect(cost).toMatchObject({ calls: 1, itemsExamined: LIMIT + 1 });
    }
    expect(atLarge.first.readUnits).toBeLessThanOrEqual(atSmall.first.readUnits * 1.25);
  });

  it('the local runtime finds its demo organization with one GetItem on a large table, never a scan', async () => {
    // Prepare: the first start creates it.
    const created = await ensureDemoOrganization();
    // Act: every later start.
    let again: Awaited<ReturnType<typeof ensureDemoOrganization>> | undefined;
    const cost = await measure(async () => {
      again = await ensureDemoOrganization();
    });
    // Assess
    expect(created.created).toBe(true);
    expect(again).toEqual({ created: false, tenantId: created.tenantId });
    expect(cost).toEqual({ calls: 1, itemsExamined: 1, readUnits: expect.any(Number) });
    expect(numberFor(0)).not.toBe('+15005550006');
  });
});
