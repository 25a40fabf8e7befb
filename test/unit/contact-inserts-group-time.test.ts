import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { upsertContacts } from '../../lambdas/contexts/contacts/contact-batch';
import { insertNewContacts } from '../../lambdas/contexts/contacts/contact-inserts';
import { runWithDeadline } from '../../lambdas/shared/deadline';

/**
 * Bench section 12: under a burst of batches each transaction of new contacts took seconds, and a group started a
 * little before the deadline's reserve still ran past API Gateway's 29 s. A group now starts only when the time left
 * holds the reserve and one and a half times the slowest group so far. A fake clock: each transaction takes 8 s.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const TENANT = '01900000-0000-7000-8000-000000000001';
const T0 = Date.parse('2026-11-29T00:00:00.000Z');
const GROUP_MS = 8_000;
/** 120 contacts: a contact and its search rows are about 33 items, so some 50 transactions, four at a time. */
const inputs = Array.from({ length: 120 }, (_, i) => ({
  displayName: `Contact ${i}`,
  phoneNumber: `+1415556${String(1000 + i)}`,
}));

let clock: number;
let finishes: number[];

beforeEach(() => {
  clock = T0;
  finishes = [];
  jest.spyOn(Date, 'now').mockImplementation(() => clock);
  ddb.reset();
  ddb.on(BatchGetCommand).resolves({ Responses: {} });
  // Each transaction ends GROUP_MS after it started; the four in flight together move the clock once.
  ddb.on(TransactWriteCommand).callsFake(async () => {
    const startedAt = clock;
    await new Promise((resolve) => setImmediate(resolve));
    clock = Math.max(clock, startedAt + GROUP_MS);
    finishes.push(clock);
    return {};
  });
});

afterEach(() => jest.restoreAllMocks());

it('starts no group the time left cannot hold at the pace of the slowest so far: every transaction ends before the deadline', async () => {
  // Prepare
  const deadline = T0 + 29_000;

  // Act
  const result = await runWithDeadline(deadline, () => insertNewContacts(TENANT, inputs, new Date(T0)));

  // Assess: waves start at 0, 8 and 16 s; one at 24 s would need 24 + 1 + 12 > 29 s, so none starts (before, it
  // started with 5 s left and ended at 32 s)
  expect(Math.max(...finishes)).toBeLessThanOrEqual(deadline);
  expect(result.created.length).toBeGreaterThan(0);
  expect(result.refused.length).toBeGreaterThan(0);
  expect(result.created.length + result.refused.length).toBe(inputs.length);
  expect(ddb.commandCalls(TransactWriteCommand).length).toBe(finishes.length);
});

it('with time for every group at that pace, writes them all', async () => {
  // Act
  const result = await runWithDeadline(T0 + 600_000, () => insertNewContacts(TENANT, inputs, new Date(T0)));

  // Assess
  expect(result.created).toHaveLength(inputs.length);
  expect(result.refused).toEqual([]);
});

it('a batch answers the contacts of groups it did not start unavailable at once, never trying them one by one as late', async () => {
  // Prepare: 30 new contacts, about a dozen transactions; 20 s left, so only the first four start
  const entries = inputs.slice(0, 30).map((item, index) => ({ index, item }));

  // Act
  const results = await upsertContacts(TENANT, entries, T0 + 20_000);

  // Assess
  const statuses = results.map((result) => result.status);
  expect(new Set(statuses)).toEqual(new Set(['created', 'unavailable']));
  expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(4);
  expect(Math.max(...finishes)).toBeLessThanOrEqual(T0 + 20_000);
  for (const result of results.filter((r) => r.status === 'unavailable'))
    expect(result).toMatchObject({ contactId: null, code: 'temporarily_unavailable' });
});
