import type { BatchEntry } from '../../lambdas/contexts/contacts/contact-batch';
import type { ContactBatchResult } from '../../lambdas/contexts/contacts/schemas';

/**
 * Races of `POST /contacts/batch` (issue 32), one round each in a fresh organization, with the
 * checks every interleaving must pass. Run on DynamoDB Local (contacts-sync.test.ts) and on the
 * limits engine, which also checks from its meters that the writers collided
 * (contacts-batch-limits.test.ts). The modules come in as arguments: the engine file loads them
 * only once its engine runs.
 */
export type BatchRaceDeps = {
  upsertContacts: (tenantId: string, entries: readonly BatchEntry[]) => Promise<ContactBatchResult[]>;
  readExternalIdClaim: (tenantId: string, externalId: string) => Promise<string | undefined>;
  readNumberClaim: (tenantId: string, number: string) => Promise<{ contactId: string; named: boolean } | undefined>;
  contactRowsOf: (tenantId: string) => Promise<Record<string, unknown>[]>;
  newTenantId: () => string;
  freshNumber: () => string;
};

const entries = (items: { displayName: string; phoneNumber: string; externalId?: string }[]): BatchEntry[] =>
  items.map((item, index) => ({ index, item }));

/**
 * Two batches naming the same external id at once (with two numbers): one contact holds it, one batch created it, the
 * other updated it, the number it does not hold is free.
 */
export async function sameExternalIdRace(deps: BatchRaceDeps): Promise<void> {
  const tenantId = deps.newTenantId();
  const [n1, n2] = [deps.freshNumber(), deps.freshNumber()];
  const first = entries([
    { displayName: 'Ada', phoneNumber: n1, externalId: 'crm-ada' },
    { displayName: 'Other 1', phoneNumber: deps.freshNumber() },
  ]);
  const second = entries([
    { displayName: 'Ada Lovelace', phoneNumber: n2, externalId: 'crm-ada' },
    { displayName: 'Other 2', phoneNumber: deps.freshNumber() },
  ]);

  const [a, b] = await Promise.all([deps.upsertContacts(tenantId, first), deps.upsertContacts(tenantId, second)]);

  const holder = await deps.readExternalIdClaim(tenantId, 'crm-ada');
  const rows = (await deps.contactRowsOf(tenantId)).filter((row) => row.externalId === 'crm-ada');
  expect(rows.map((row) => row.id)).toEqual([holder]);
  expect([a[0].status, b[0].status].sort()).toEqual(['created', 'updated']);
  expect([a[0].contactId, b[0].contactId]).toEqual([holder, holder]);
  const held = rows[0].normalizedNumber as string;
  expect([n1, n2]).toContain(held);
  expect((await deps.readNumberClaim(tenantId, held))?.contactId).toBe(holder);
  expect(await deps.readNumberClaim(tenantId, held === n1 ? n2 : n1)).toBeUndefined();
}

/**
 * Two records of a CRM with one number, at once: one contact holds the number, the other item is a conflict naming it,
 * and its external id is claimed by nobody.
 */
export async function oneNumberTwoRecordsRace(deps: BatchRaceDeps): Promise<void> {
  const tenantId = deps.newTenantId();
  const n = deps.freshNumber();

  const [[a], [b]] = await Promise.all([
    deps.upsertContacts(tenantId, entries([{ displayName: 'Record A', phoneNumber: n, externalId: 'rec-a' }])),
    deps.upsertContacts(tenantId, entries([{ displayName: 'Record B', phoneNumber: n, externalId: 'rec-b' }])),
  ]);

  const holder = (await deps.readNumberClaim(tenantId, n))?.contactId;
  const [winner, loser] = a.status === 'created' ? [a, b] : [b, a];
  expect([winner.status, loser.status]).toEqual(['created', 'conflict']);
  expect([winner.contactId, loser.contactId]).toEqual([holder, holder]);
  expect(await deps.readExternalIdClaim(tenantId, winner.externalId!)).toBe(holder);
  expect(await deps.readExternalIdClaim(tenantId, loser.externalId!)).toBeUndefined();
  expect((await deps.contactRowsOf(tenantId)).map((row) => [row.id, row.externalId])).toEqual([
    [holder, winner.externalId],
  ]);
}

/**
 * One batch with indirect overlaps (issue 38, part 9), in a fresh organization holding contacts X (`crm-x` at number A)
 * and Z (`crm-z` at C): item 0 moves X from A to B; item 1 moves Z onto A, the number item 0 frees (it names X by
 * that number); item 2 names Z by its number C; item 3 is new. Items run several at once, so their writes interleave
 * differently from round to round; the answers and the directory must be the same every time: items are judged in
 * request order, item 1 is `conflict` naming X (nothing written for it), item 2 (which names no contact an item still
 * standing names) updates Z, item 3 is created.
 */
export async function indirectOverlapRound(deps: BatchRaceDeps): Promise<void> {
  // Prepare
  const tenantId = deps.newTenantId();
  const [a, b, c, d] = [deps.freshNumber(), deps.freshNumber(), deps.freshNumber(), deps.freshNumber()];
  const [x, z] = await deps.upsertContacts(
    tenantId,
    entries([
      { displayName: 'X', phoneNumber: a, externalId: 'crm-x' },
      { displayName: 'Z', phoneNumber: c, externalId: 'crm-z' },
    ]),
  );

  // Act
  const answers = await deps.upsertContacts(
    tenantId,
    entries([
      { displayName: 'X moved', phoneNumber: b, externalId: 'crm-x' },
      { displayName: 'Z moved', phoneNumber: a, externalId: 'crm-z' },
      { displayName: 'Z renamed', phoneNumber: c },
      { displayName: 'New', phoneNumber: d },
    ]),
  );

  // Assess
  expect(answers.map((answer) => [answer.status, answer.contactId])).toEqual([
    ['updated', x.contactId],
    ['conflict', x.contactId],
    ['updated', z.contactId],
    ['created', expect.any(String)],
  ]);
  expect(answers[1]).toMatchObject({
    code: 'contact_conflict',
    error: expect.stringContaining('contacts[1].phoneNumber: names contact'),
  });
  const rows = new Map((await deps.contactRowsOf(tenantId)).map((row) => [row.id, row]));
  expect(rows.get(x.contactId)).toMatchObject({ displayName: 'X moved', normalizedNumber: b, externalId: 'crm-x' });
  expect(rows.get(z.contactId)).toMatchObject({ displayName: 'Z renamed', normalizedNumber: c, externalId: 'crm-z' });
  expect(rows.size).toBe(3);
  expect(await deps.readNumberClaim(tenantId, a)).toBeUndefined();
  expect((await deps.readNumberClaim(tenantId, b))?.contactId).toBe(x.contactId);
  expect((await deps.readNumberClaim(tenantId, d))?.contactId).toBe(answers[3].contactId);
}
