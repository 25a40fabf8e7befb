import { createTestTable } from '../support/table';
import { suiteSize } from '../support/suite-sizes';
import { contactRowsOf, numberClaimRowsOf } from '../support/directory-rows';
import { NotFoundError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import * as contacts from '../../lambdas/contexts/contacts/contacts';
import { retryWhileBusy } from '../support/busy-retry';
import { roundsUntilTransactionsMeet } from '../support/engine-meters';
import { rendezvous } from '../support/request-rendezvous';
import { ContactConflictError } from '../../lambdas/contexts/contacts/errors';
import { fingerprintOf, SEARCH_INDEX_ATTRIBUTE, searchRowKey } from '../../lambdas/contexts/contacts/search-rows';
import { searchIndexOf, type SearchFields } from '../../lambdas/contexts/contacts/search-terms';
import { batchGetItems } from '../../lambdas/shared/table/batch-get';
import { dynamo } from '../../lambdas/shared/aws';

/**
 * Races on one number. Each scenario runs its rounds (2 in `npm test`, many in the bench: CONTACT_RACE_ROUNDS) on each
 * engine (DynamoDB Local, where writes are serialized, and the limits engine, where colliding transactions are cancelled
 * and retried; there, more rounds until the racers' transactions met), each round in a fresh organization, so the
 * whole directory can be checked after every round: whatever the interleaving, a number has at most one contact, its
 * claim names that contact (and says whether it is named), no claim is left without its contact, and a later create
 * meets the owner. Every request answers what the API
 * promises: success, a 409 naming a contact that held the number, or (for PATCH/DELETE of a
 * deleted contact) 404; never an unexplained error (a 503 for contention is sent again, as a client does).
 */
const ROUNDS = suiteSize('CONTACT_RACE_ROUNDS', 2);

/**
 * The operations as a client calls them: on DynamoDB's limits (the limits engine) a write that kept
 * colliding is answered busy (503) having written nothing, and the client sends it again.
 */
const createContact = (...args: Parameters<typeof contacts.createContact>) =>
  retryWhileBusy(() => contacts.createContact(...args));
const updateContact = (...args: Parameters<typeof contacts.updateContact>) =>
  retryWhileBusy(() => contacts.updateContact(...args));
const deleteContact = (...args: Parameters<typeof contacts.deleteContact>) =>
  retryWhileBusy(() => contacts.deleteContact(...args));
const ensureContactForNumber = (...args: Parameters<typeof contacts.ensureContactForNumber>) =>
  retryWhileBusy(() => contacts.ensureContactForNumber(...args));
// Many rounds of real DynamoDB writes: seconds alone, longer when the whole suite shares 2 cores.
jest.setTimeout(120_000);
let serial = 0;
/** The numbers of the round under way: its organization is its own, so no other number can hold a claim of it. */
let roundNumbers: string[] = [];
const freshNumber = () => {
  const number = `+1415777${String((serial += 1)).padStart(4, '0')}`;
  roundNumbers.push(number);
  return number;
};

beforeAll(createTestTable);

type Row = Record<string, unknown>;

/**
 * The organization's contact rows and the claim rows of every number its round used (test code only; claims read
 * strongly consistent). Numbers are never reused across organizations.
 */
async function directory(tenantId: string): Promise<{ contacts: Row[]; claims: Row[] }> {
  return { contacts: await contactRowsOf(tenantId), claims: await numberClaimRowsOf(tenantId, roundNumbers) };
}

/**
 * The search index agrees with the fields, whichever writer came last: the row's fingerprint is
 * that of its current entries, and every entry's row exists.
 */
async function expectFiledUnderItsEntries(contact: Row): Promise<void> {
  const { tokens } = searchIndexOf(contact as SearchFields);
  expect(contact[SEARCH_INDEX_ATTRIBUTE]).toBe(fingerprintOf(tokens));
  const rows = await batchGetItems(
    tokens.map((token) => searchRowKey(contact.tenantId as string, token, contact.id as string)),
    { consistentRead: true },
  );
  expect(rows).toHaveLength(tokens.length);
}

/** Checks the claim invariants of the whole directory; returns number -> the contact holding it. */
async function expectConsistentDirectory(tenantId: string): Promise<Map<string, Row>> {
  const { contacts, claims } = await directory(tenantId);
  const holders = new Map<string, Row>();
  for (const contact of contacts) {
    const number = contact.normalizedNumber as string;
    expect(holders.has(number) ? `${number} held twice` : 'ok').toBe('ok');
    holders.set(number, contact);
    await expectFiledUnderItsEntries(contact);
  }
  // One claim per held number, naming its holder, with the holder's named flag; no claim without its holder.
  expect(claims.map((c) => [c.pk, c.contactId, c.named]).sort()).toEqual(
    contacts.map((c) => [`T#${tenantId}#NUMBER#${c.normalizedNumber}`, c.id, c.isAutoCreated === false]).sort(),
  );
  return holders;
}

/** A later POST for `number` meets its owner: 409 naming a named owner, adoption of an auto one, else a new contact. */
async function expectLaterCreateMeetsOwner(tenantId: string, number: string, owner: Row | undefined): Promise<void> {
  const later = createContact(tenantId, { displayName: 'Latecomer', phoneNumber: number });
  if (!owner) await expect(later).resolves.toMatchObject({ adopted: false });
  else if (owner.isAutoCreated)
    await expect(later).resolves.toMatchObject({ adopted: true, contact: { id: owner.id } });
  else
    await expect(later).rejects.toMatchObject({ constructor: ContactConflictError, details: { contactId: owner.id } });
  await expectConsistentDirectory(tenantId);
}

/** The contactId a 409 names; fails on any other outcome, showing it. */
function conflictNaming(result: PromiseSettledResult<unknown>): string {
  expect(result).toMatchObject({ status: 'rejected', reason: expect.any(ContactConflictError) });
  return (result as PromiseRejectedResult).reason.details.contactId as string;
}

/** Runs the scenario's rounds (more on the limits engine until the racers met), each with its own numbers. */
const rounds = (run: (round: number) => Promise<void>) =>
  roundsUntilTransactionsMeet(ROUNDS, (round) => {
    roundNumbers = [];
    return run(round);
  });

describe('races on one number', () => {
  it('adoption racing a renumber onto the number: the adoption wins, the renumber is a 409 naming it', async () => {
    await rounds(async (round) => {
      // Prepare: an auto-created contact holds N; a named contact holds M
      const tenantId = uuidv7();
      const n = freshNumber();
      const autoId = await ensureContactForNumber(tenantId, n, 'auto_inbound');
      const { contact: named } = await createContact(tenantId, {
        displayName: `Named ${round}`,
        phoneNumber: freshNumber(),
      });
      // Act
      const [adopted, renumbered] = await Promise.allSettled([
        createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
        updateContact(tenantId, named.id, { phoneNumber: n }),
      ]);
      // Assess: N was claimed throughout, so the renumber never moves anything
      expect(adopted).toMatchObject({
        status: 'fulfilled',
        value: { adopted: true, contact: { id: autoId, isAutoCreated: false } },
      });
      expect(conflictNaming(renumbered)).toBe(autoId);
      const holders = await expectConsistentDirectory(tenantId);
      expect(holders.get(n)).toMatchObject({ id: autoId, isAutoCreated: false });
      expect(holders.get(named.phoneNumber)).toMatchObject({ id: named.id });
      await expectLaterCreateMeetsOwner(tenantId, n, holders.get(n));
    });
  });

  it('adoption and a renumber racing a delete of the auto-created contact: never two owners, never a stray claim', async () => {
    await rounds(async (round) => {
      const tenantId = uuidv7();
      const n = freshNumber();
      const autoId = await ensureContactForNumber(tenantId, n, 'auto_outbound');
      const { contact: mover } = await createContact(tenantId, {
        displayName: `Mover ${round}`,
        phoneNumber: freshNumber(),
      });

      const [created, renumbered, deleted] = await Promise.allSettled([
        createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
        updateContact(tenantId, mover.id, { phoneNumber: n }),
        deleteContact(tenantId, autoId),
      ]);

      // Assess: the delete always succeeds; the create adopts, creates, or meets the mover; the renumber moves or meets
      // a holder
      expect(deleted.status).toBe('fulfilled');
      const createdId = created.status === 'fulfilled' ? created.value.contact.id : undefined;
      if (created.status === 'rejected') expect(conflictNaming(created)).toBe(mover.id);
      if (renumbered.status === 'rejected') expect([autoId, createdId]).toContain(conflictNaming(renumbered));
      const holders = await expectConsistentDirectory(tenantId);
      expect([...holders.values()].map((c) => c.id)).not.toContain(autoId);
      const owner = holders.get(n);
      if (owner) expect([createdId, renumbered.status === 'fulfilled' ? mover.id : undefined]).toContain(owner.id);
      await expectLaterCreateMeetsOwner(tenantId, n, owner);
    });
  });

  it('adoption racing a renumber of the same auto-created contact: its claim follows it and says it is named', async () => {
    await rounds(async (round) => {
      const tenantId = uuidv7();
      const n = freshNumber();
      const p = freshNumber();
      const autoId = await ensureContactForNumber(tenantId, n, 'auto_inbound');

      const [created, renumbered] = await Promise.allSettled([
        createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
        updateContact(tenantId, autoId, { phoneNumber: p }),
      ]);

      // Assess: both succeed in either order: adopted then moved to P (N free), or moved then a new contact for N
      expect(created.status).toBe('fulfilled');
      expect(renumbered).toMatchObject({ status: 'fulfilled', value: { id: autoId, normalizedNumber: p } });
      const holders = await expectConsistentDirectory(tenantId);
      expect(holders.get(p)).toMatchObject({ id: autoId });
      await expectLaterCreateMeetsOwner(tenantId, p, holders.get(p));
      await expectLaterCreateMeetsOwner(tenantId, n, (await expectConsistentDirectory(tenantId)).get(n));
    });
  });

  it('adoption racing a PATCH of other fields of the same contact: the row, its search entries and the PATCH answer agree', async () => {
    // Left alone, the PATCH (a read and a write) is done before the adoption (a refused insert, a
    // read, then its write) writes. In even rounds the PATCH's write waits until the adoption's is
    // under way, so it meets it at the contact row, having read the row before the adoption.
    const meeting = rendezvous(dynamo, {
      held: (input) => input.includes('Acme'),
      until: (input) => input.includes('SET named = :true'),
    });
    try {
      await rounds(async (round) => {
        const tenantId = uuidv7();
        const n = freshNumber();
        const autoId = await ensureContactForNumber(tenantId, n, 'auto_inbound');
        if (round % 2 === 0) meeting.arm();

        const [created, patched] = await Promise.allSettled([
          createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
          updateContact(tenantId, autoId, { notes: 'patched', company: 'Acme' }),
        ]);
        if (round % 2 === 0) expect(meeting.met()).toBe(true);

        // Assess: either order is fine, but the answer must be a state that existed: a PATCH whose
        // fields survived came after the adoption (which clears them), so it answers a named contact.
        expect(created).toMatchObject({ status: 'fulfilled', value: { adopted: true, contact: { id: autoId } } });
        const holders = await expectConsistentDirectory(tenantId);
        const row = holders.get(n) as Row;
        expect(row).toMatchObject({ id: autoId, isAutoCreated: false, displayName: `Adopter ${round}` });
        const patchedLast = row.notes === 'patched';
        expect(patched).toMatchObject({
          status: 'fulfilled',
          value: { notes: 'patched', isAutoCreated: !patchedLast },
        });
        if (patchedLast) expect(patched).toMatchObject({ value: { displayName: `Adopter ${round}`, company: 'Acme' } });
      });
    } finally {
      meeting.remove();
    }
  });

  it('two renumbers onto a free number: exactly one wins, the other is a 409 naming the winner and keeps its number', async () => {
    await rounds(async (round) => {
      const tenantId = uuidv7();
      const n = freshNumber();
      const { contact: a } = await createContact(tenantId, { displayName: `A ${round}`, phoneNumber: freshNumber() });
      const { contact: b } = await createContact(tenantId, { displayName: `B ${round}`, phoneNumber: freshNumber() });

      const results = await Promise.allSettled([
        updateContact(tenantId, a.id, { phoneNumber: n }),
        updateContact(tenantId, b.id, { phoneNumber: n }),
      ]);

      const holders = await expectConsistentDirectory(tenantId);
      const winner = holders.get(n);
      const loser = winner?.id === a.id ? b : a;
      expect([a.id, b.id]).toContain(winner?.id);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(conflictNaming(results[loser === a ? 0 : 1])).toBe(winner?.id);
      expect(holders.get(loser.phoneNumber)).toMatchObject({ id: loser.id });
      await expectLaterCreateMeetsOwner(tenantId, n, winner);
    });
  });

  it('the same renumber sent twice at once (a retried PATCH): both succeed, never a 409 naming the contact itself', async () => {
    await rounds(async (round) => {
      const tenantId = uuidv7();
      const n = freshNumber();
      const { contact } = await createContact(tenantId, { displayName: `Twice ${round}`, phoneNumber: freshNumber() });

      const results = await Promise.allSettled([
        updateContact(tenantId, contact.id, { phoneNumber: n }),
        updateContact(tenantId, contact.id, { phoneNumber: n }),
      ]);

      expect(results).toMatchObject([
        { status: 'fulfilled', value: { id: contact.id, normalizedNumber: n } },
        { status: 'fulfilled', value: { id: contact.id, normalizedNumber: n } },
      ]);
      const holders = await expectConsistentDirectory(tenantId);
      expect(holders.get(n)).toMatchObject({ id: contact.id });
      expect(holders.has(contact.phoneNumber)).toBe(false);
      await expectLaterCreateMeetsOwner(tenantId, n, holders.get(n));
    });
  });

  it('auto-creation, a create and a renumber racing onto a free number: one owner, and every answer names it', async () => {
    await rounds(async (round) => {
      const tenantId = uuidv7();
      const n = freshNumber();
      const { contact: mover } = await createContact(tenantId, {
        displayName: `Mover ${round}`,
        phoneNumber: freshNumber(),
      });

      const [auto, created, renumbered] = await Promise.allSettled([
        ensureContactForNumber(tenantId, n, 'auto_inbound'),
        createContact(tenantId, { displayName: `Creator ${round}`, phoneNumber: n }),
        updateContact(tenantId, mover.id, { phoneNumber: n }),
      ]);

      // Assess: nothing deletes here, so whoever first claimed N still holds it (adopted or not)
      const holders = await expectConsistentDirectory(tenantId);
      const owner = holders.get(n) as Row;
      expect(auto).toMatchObject({ status: 'fulfilled', value: owner.id });
      if (created.status === 'fulfilled') expect(created.value.contact.id).toBe(owner.id);
      else expect(conflictNaming(created)).toBe(owner.id);
      if (renumbered.status === 'fulfilled') expect(owner.id).toBe(mover.id);
      else expect(conflictNaming(renumbered)).toBe(owner.id);
      await expectLaterCreateMeetsOwner(tenantId, n, owner);
    });
  });

  it('a PATCH or DELETE of a contact deleted meanwhile is a 404, not a conflict', async () => {
    await rounds(async () => {
      const tenantId = uuidv7();
      const autoId = await ensureContactForNumber(tenantId, freshNumber(), 'auto_inbound');

      const [renumbered, deletedA, deletedB] = await Promise.allSettled([
        updateContact(tenantId, autoId, { phoneNumber: freshNumber() }),
        deleteContact(tenantId, autoId),
        deleteContact(tenantId, autoId),
      ]);

      for (const r of [renumbered, deletedA, deletedB])
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(NotFoundError);
      expect([deletedA, deletedB].filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await directory(tenantId)).toEqual({ contacts: [], claims: [] });
    });
  });
});

describe('concurrent writers of one contact (issue 38, parts 3 and 5)', () => {
  it('16 PATCHes of distinct custom fields at once: all succeed with 16 versions, and the contact keeps every field', async () => {
    // Prepare: a contact without custom fields (the first writer creates the map, the others merge into it).
    const tenantId = uuidv7();
    const { contact } = await contacts.createContact(tenantId, { displayName: 'Ada', phoneNumber: freshNumber() });
    const keys = Array.from({ length: 16 }, (_, i) => `field_${i}`);

    // Act: one PATCH per key, all at once, none sent again (each must succeed by itself).
    const answers = await Promise.all(
      keys.map((key) => contacts.updateContact(tenantId, contact.id, { customFields: { [key]: key.toUpperCase() } })),
    );

    // Assess: 16 distinct versions and times that only grow with them; the contact holds all 16 fields,
    // a version at least 16 above the create's, and an updatedAt no older than any answer.
    expect(new Set(answers.map((answer) => answer.version)).size).toBe(16);
    const byVersion = [...answers].sort((a, b) => a.version - b.version);
    for (let i = 1; i < byVersion.length; i += 1)
      expect(Date.parse(byVersion[i].updatedAt)).toBeGreaterThan(Date.parse(byVersion[i - 1].updatedAt));
    const stored = await contacts.getContact(tenantId, contact.id);
    expect(stored.customFields).toEqual(Object.fromEntries(keys.map((key) => [key, key.toUpperCase()])));
    expect(stored.version).toBeGreaterThanOrEqual(contact.version + 16);
    for (const answer of answers)
      expect(Date.parse(stored.updatedAt)).toBeGreaterThanOrEqual(Date.parse(answer.updatedAt));
  });
});
