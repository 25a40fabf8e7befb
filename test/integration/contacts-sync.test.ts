import * as z from 'zod/mini';
import { createTestTable } from '../support/table';
import { contactRowsOf } from '../support/directory-rows';
import { meterDynamoReads, type ReadMeter } from '../support/read-meter';
import { numberFor, putInBatches } from '../support/scale-seed';
import { uuidv7 } from '../../lambdas/shared/ids';
import { recordCall } from '../../lambdas/contexts/calls/calls';
import { recordConsentChange } from '../../lambdas/contexts/contacts/consent-copies';
import { upsertContacts, type BatchEntry } from '../../lambdas/contexts/contacts/contact-batch';
import {
  createContact,
  deleteContact,
  getContact,
  listContacts,
  updateContact,
} from '../../lambdas/contexts/contacts/contacts';
import { readExternalIdClaim, readNumberClaim } from '../../lambdas/contexts/contacts/contact-claims';
import { toItem } from '../../lambdas/contexts/contacts/contact-rows';
import {
  oneNumberTwoRecordsRace,
  indirectOverlapRound,
  sameExternalIdRace,
  type BatchRaceDeps,
} from '../support/batch-races';
import { suiteSize } from '../support/suite-sizes';
import type { Contact, ContactBatchItemInput, DeletedContact } from '../../lambdas/contexts/contacts/schemas';

/**
 * Keeping a copy of the directory in step (issue 32): the batch upsert answers every item, the
 * feed of changes (`updatedSince`) returns every change oldest first with tombstones of deleted
 * contacts, a walk of it while writes go on converges, and a page of it costs the same at any
 * directory size. On DynamoDB Local; the races and the load run on the limits engine
 * (contacts-batch-limits.test.ts).
 */
jest.setTimeout(120_000);

beforeAll(createTestTable);

let serial = 0;
const freshNumber = () => numberFor((serial += 1), '+1628');

const changesSince = (
  tenantId: string,
  updatedSince: string,
  extra: { limit?: number; cursor?: string; includeDeleted?: boolean; includeAutoCreated?: boolean } = {},
) => listContacts(tenantId, { limit: 50, includeAutoCreated: true, updatedSince, ...extra });

/** The new contacts of the mixed batch, after its 7 items that meet contacts or are invalid. */
const NEW_IN_BATCH = 33;

describe('POST /contacts/batch, in the domain', () => {
  // 40 items: new contacts in several transaction groups at once, as a full batch has (the e2e sends one of 100 over
  // HTTP; section 12, sixteen at once).
  it('answers every item of a mixed batch of 40 at its index: created, updated, adopted, unchanged, conflict, invalid', async () => {
    // Prepare: contacts for the items to meet
    const tenantId = uuidv7();
    const byExternalId = (
      await createContact(tenantId, { displayName: 'Old Name', phoneNumber: freshNumber(), externalId: 'crm-1' })
    ).contact;
    const byNumber = (
      await createContact(tenantId, { displayName: 'Walk-in', phoneNumber: freshNumber(), company: 'Kept Ltd' })
    ).contact;
    const auto = await recordCall(tenantId, {
      direction: 'inbound',
      fromNumber: freshNumber(),
      toNumber: '+15005550006',
      status: 'completed',
      startedAt: new Date(),
    });
    const autoNumber = (await getContact(tenantId, auto.contactId!)).normalizedNumber!;
    const same = (
      await createContact(tenantId, {
        displayName: 'Same',
        phoneNumber: freshNumber(),
        externalId: 'crm-4',
        customFields: { tier: 'gold' },
      })
    ).contact;
    const otherRecord = (
      await createContact(tenantId, { displayName: 'Another record', phoneNumber: freshNumber(), externalId: 'crm-5' })
    ).contact;
    const items: (ContactBatchItemInput | { raw: unknown })[] = [
      {
        displayName: 'New Name',
        phoneNumber: byExternalId.phoneNumber,
        externalId: 'crm-1',
        customFields: { stage: 'lead' },
      },
      { displayName: 'Walk-in', phoneNumber: byNumber.phoneNumber, externalId: 'crm-2' },
      { displayName: 'Named Now', phoneNumber: autoNumber, externalId: 'crm-3' },
      { displayName: 'Same', phoneNumber: same.phoneNumber, externalId: 'crm-4', customFields: { tier: 'gold' } },
      { displayName: 'Not Merged', phoneNumber: otherRecord.phoneNumber, externalId: 'crm-6' },
      { raw: { displayName: 'Bad', phoneNumber: '0800 FLOWERS' } },
      { displayName: 'Twice', phoneNumber: byNumber.phoneNumber },
      ...Array.from({ length: NEW_IN_BATCH }, (_, i) => ({
        displayName: `New ${i}`,
        phoneNumber: freshNumber(),
        externalId: `crm-new-${i}`,
      })),
    ];
    const entries: BatchEntry[] = items.map((item, index) =>
      'raw' in item
        ? { index, invalid: `contacts[${index}].phoneNumber: must be an E.164 phone number such as +14155550123` }
        : { index, item },
    );

    // Act
    const results = await upsertContacts(tenantId, entries);

    // Assess: one answer per item, in order, each as the rules say
    expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));
    expect(results.slice(0, 7).map((r) => [r.status, r.contactId])).toEqual([
      ['updated', byExternalId.id],
      ['updated', byNumber.id],
      ['adopted', auto.contactId],
      ['unchanged', same.id],
      ['conflict', otherRecord.id],
      ['invalid', null],
      ['invalid', null],
    ]);
    expect(results[4]).toMatchObject({
      code: 'contact_conflict',
      error: expect.stringContaining('contacts[4].phoneNumber'),
    });
    expect(results[6]).toMatchObject({
      code: 'validation_failed',
      error: expect.stringContaining('contacts[6].phoneNumber: repeats contacts[1]'),
    });
    expect(results.slice(7).every((r) => r.status === 'created' && r.contactId !== null)).toBe(true);
    expect(await getContact(tenantId, byExternalId.id)).toMatchObject({
      displayName: 'New Name',
      customFields: { stage: 'lead' },
      externalId: 'crm-1',
    });
    // A field the item leaves out stays; the number's contact takes the item's external id.
    expect(await getContact(tenantId, byNumber.id)).toMatchObject({ company: 'Kept Ltd', externalId: 'crm-2' });
    expect(await getContact(tenantId, auto.contactId!)).toMatchObject({
      isAutoCreated: false,
      displayName: 'Named Now',
      externalId: 'crm-3',
    });
    expect((await getContact(tenantId, same.id)).updatedAt).toBe(same.updatedAt);
    expect(await getContact(tenantId, otherRecord.id)).toMatchObject({
      displayName: 'Another record',
      externalId: 'crm-5',
    });
    expect(await contactRowsOf(tenantId)).toHaveLength(5 + NEW_IN_BATCH);
  });

  it('finds a contact by its external id with two reads by key (its claim, then the contact: both strongly consistent), and frees the id when the contact is deleted', async () => {
    const tenantId = uuidv7();
    const { contact } = await createContact(tenantId, {
      displayName: 'Ext',
      phoneNumber: freshNumber(),
      externalId: 'sf-003A',
    });
    const meter = meterDynamoReads();
    try {
      const found = await listContacts(tenantId, { limit: 50, includeAutoCreated: true, externalId: 'sf-003A' });
      expect(found).toEqual({ items: [contact], nextCursor: null });
      expect(meter.snapshot().calls).toBe(2);
    } finally {
      meter.stop();
    }
    await expect(
      createContact(tenantId, { displayName: 'Other', phoneNumber: freshNumber(), externalId: 'sf-003A' }),
    ).rejects.toMatchObject({
      status: 409,
      field: 'externalId',
      details: { contactId: contact.id },
    });
    await deleteContact(tenantId, contact.id);
    expect(
      (await listContacts(tenantId, { limit: 50, includeAutoCreated: true, externalId: 'sf-003A' })).items,
    ).toEqual([]);
    await expect(
      createContact(tenantId, { displayName: 'Again', phoneNumber: freshNumber(), externalId: 'sf-003A' }),
    ).resolves.toMatchObject({ adopted: false });
  });
});

/** Rounds per race (2 in `npm test`, more in the bench): each round checks every interleaving's rules. */
const RACE_ROUNDS = suiteSize('BATCH_RACE_ROUNDS', 2);
const OVERLAP_ROUNDS = suiteSize('BATCH_OVERLAP_ROUNDS', 2);

describe('races of batches, on DynamoDB Local (the limits engine runs them too, contacts-batch-limits.test.ts)', () => {
  const deps = (): BatchRaceDeps => ({
    upsertContacts,
    readExternalIdClaim,
    readNumberClaim,
    contactRowsOf,
    newTenantId: () => uuidv7(),
    freshNumber,
  });

  it('two batches naming the same external id at once leave one contact holding it', async () => {
    for (let round = 0; round < RACE_ROUNDS; round += 1) await sameExternalIdRace(deps());
  });

  it('a number claimed by two writers with different external ids: one contact holds it, the other is a conflict naming it', async () => {
    for (let round = 0; round < RACE_ROUNDS; round += 1) await oneNumberTwoRecordsRace(deps());
  });

  it('a batch whose items overlap through a contact (one moves it off a number another names) answers the same every time', async () => {
    for (let round = 0; round < OVERLAP_ROUNDS; round += 1) await indirectOverlapRound(deps());
  });
});

describe('the feed of changes (updatedSince)', () => {
  it('returns every contact changed since a time, oldest change first: fields, consent and deletions (tombstones only on request)', async () => {
    // Prepare
    const tenantId = uuidv7();
    const before = (await createContact(tenantId, { displayName: 'Before', phoneNumber: freshNumber() })).contact;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const since = new Date().toISOString();
    const a = (await createContact(tenantId, { displayName: 'A', phoneNumber: freshNumber() })).contact;
    const b = (await createContact(tenantId, { displayName: 'B', phoneNumber: freshNumber() })).contact;
    const gone = (await createContact(tenantId, { displayName: 'Gone', phoneNumber: freshNumber() })).contact;
    await updateContact(tenantId, a.id, { tag: 'vip' });
    await recordConsentChange(tenantId, b.normalizedNumber!, {
      status: 'opted_out',
      source: 'sms_keyword',
      at: new Date(),
      note: 'Replied STOP',
    });
    await deleteContact(tenantId, gone.id);
    const auto = await recordCall(tenantId, {
      direction: 'inbound',
      fromNumber: freshNumber(),
      toNumber: '+15005550006',
      status: 'completed',
      startedAt: new Date(),
    });

    // Act
    const page = await changesSince(tenantId, since);
    const withDeleted = await changesSince(tenantId, since, { includeDeleted: true });
    const namedOnly = await changesSince(tenantId, since, { includeAutoCreated: false });

    // Assess: each contact once, as it last changed, in the order of its last change
    expect(page.items.map((c) => c.id)).toEqual([a.id, b.id, auto.contactId]);
    expect(page.items[0]).toMatchObject({ tag: 'vip' });
    expect(page.items[1]).toMatchObject({ consentStatus: 'opted_out' });
    expect(page.nextCursor).toBeNull();
    expect(page.deletedContacts).toBeUndefined();
    expect(withDeleted.deletedContacts).toEqual([
      { id: gone.id, deletedAt: expect.any(String), externalId: null, phoneNumber: gone.phoneNumber, version: 2 },
    ]);
    expect(withDeleted.items).toEqual(page.items);
    expect(namedOnly.items.map((c) => c.id)).toEqual([a.id, b.id]);
    expect(page.items.map((c) => c.id)).not.toContain(before.id);
  });

  it('pages with the ordinary cursor, short pages where it skips what the page leaves out, nothing twice and nothing missed', async () => {
    const tenantId = uuidv7();
    const since = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1)
      ids.push((await createContact(tenantId, { displayName: `P${i}`, phoneNumber: freshNumber() })).contact.id);
    await deleteContact(tenantId, ids[2]);
    await deleteContact(tenantId, ids[3]);

    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await changesSince(tenantId, since, { limit: 2, cursor });
      seen.push(...page.items.map((c) => c.id));
      pages.push(page.items.length);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);

    expect(seen).toEqual([ids[0], ids[1], ids[4], ids[5], ids[6]]);
    expect(Math.max(...pages)).toBeLessThanOrEqual(2);
  });

  it('a walk while writes go on returns every contact that did not change during it, and the walks converge on every last state', async () => {
    // Prepare: a directory, and writers that change it while a syncer walks the feed
    const tenantId = uuidv7();
    const start = new Date(Date.now() - 1000).toISOString();
    const initial = await upsertContacts(
      tenantId,
      Array.from({ length: 40 }, (_, index) => ({
        index,
        item: { displayName: `Sync ${index}`, phoneNumber: freshNumber(), externalId: `s-${index}` },
      })),
    );
    const liveIds = initial.map((r) => r.contactId!);
    let writing = true;
    const writer = async (seed: number) => {
      for (let n = 0; writing; n += 1) {
        const pick = liveIds[(seed * 7 + n * 13) % liveIds.length];
        if (n % 9 === 4) {
          const { contact } = await createContact(tenantId, {
            displayName: `Late ${seed}-${n}`,
            phoneNumber: freshNumber(),
          });
          liveIds.push(contact.id);
        } else if (n % 11 === 7 && liveIds.length > 20) {
          if (liveIds.includes(pick)) liveIds.splice(liveIds.indexOf(pick), 1);
          await deleteContact(tenantId, pick).catch(() => undefined);
        } else {
          await updateContact(tenantId, pick, { notes: `change ${seed}-${n}` }).catch(() => undefined);
        }
      }
    };

    // The syncer: pages of 5, each walk from the `nextUpdatedSince` of the previous walk's last page (the documented
    // recipe).
    const mirror = new Map<string, Contact>();
    const tombstones = new Set<string>();
    const apply = (contacts: Contact[], deleted: DeletedContact[] = []) => {
      for (const contact of contacts) {
        const known = mirror.get(contact.id);
        if (!known || contact.updatedAt >= known.updatedAt) mirror.set(contact.id, contact);
      }
      for (const { id } of deleted) {
        mirror.delete(id);
        tombstones.add(id);
      }
    };
    let nextUpdatedSince = '';
    const walk = async (since: string): Promise<Set<string>> => {
      const returned = new Set<string>();
      let cursor: string | undefined;
      let lastChange = '';
      do {
        const page = await changesSince(tenantId, since, { limit: 5, cursor, includeDeleted: true });
        expect(page.items.length + (page.deletedContacts?.length ?? 0)).toBeLessThanOrEqual(5);
        page.items.forEach((c) => returned.add(c.id));
        apply(page.items, page.deletedContacts);
        expect(Date.parse(page.nextUpdatedSince!)).toBeLessThanOrEqual(Date.now());
        nextUpdatedSince = page.nextUpdatedSince!;
        if (page.nextCursor) {
          expect(page.nextCursor > lastChange).toBe(true);
          lastChange = page.nextCursor;
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return returned;
    };
    // Act: walks while four writers run, then one after they stop
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    let since = start;
    for (let round = 0; round < 4; round += 1) {
      const before = new Map((await contactRowsOf(tenantId)).map((row) => [row.id as string, row.sequence as number]));
      const returned = await walk(since);
      const after = new Map((await contactRowsOf(tenantId)).map((row) => [row.id as string, row.sequence as number]));
      // Assess: a contact that sat still during the walk was returned by it
      for (const [id, sequence] of before) {
        if (after.get(id) === sequence) expect(returned.has(id) ? id : `${id} missed`).toBe(id);
      }
      since = nextUpdatedSince;
    }
    writing = false;
    await writers;
    await walk(since);

    // Assess: the copy is the directory, every contact as it last is; what was deleted is gone from it
    const directory = await contactRowsOf(tenantId);
    expect(new Set(mirror.keys())).toEqual(new Set(directory.map((row) => row.id as string)));
    for (const row of directory)
      expect(mirror.get(row.id as string)).toEqual(await getContact(tenantId, row.id as string));
    for (const id of tombstones) expect(directory.some((row) => row.id === id)).toBe(false);
  });
});

describe('a feed a mirror can trust (issue 38, parts 1 and 2)', () => {
  const DAY = 24 * 3600 * 1000;
  const isUuid = (value: string) => z.uuid().safeParse(value).success;

  it('answers 410 resync_required to a walk for deletions from before the 30 days tombstones are kept, judging them by their own time', async () => {
    // Prepare: two deletions, 28 and 30.5 days ago (the older tombstone still stored: no TTL has removed it)
    const tenantId = uuidv7();
    const now = Date.now();
    const recent = (
      await createContact(tenantId, { displayName: 'Recent', phoneNumber: freshNumber(), externalId: 'gone-28' })
    ).contact;
    const old = (await createContact(tenantId, { displayName: 'Old', phoneNumber: freshNumber() })).contact;
    await deleteContact(tenantId, recent.id, null, new Date(now - 28 * DAY));
    await deleteContact(tenantId, old.id, null, new Date(now - 30.5 * DAY));

    // Act
    const at31 = await changesSince(tenantId, new Date(now - 31 * DAY).toISOString(), { includeDeleted: true }).catch(
      (err: unknown) => err,
    );
    const at29 = await changesSince(tenantId, new Date(now - 29 * DAY).toISOString(), { includeDeleted: true });
    const contactsOnly = await changesSince(tenantId, new Date(now - 31 * DAY).toISOString());

    // Assess: 410 naming the oldest time it answers; 200 at 29 days with the tombstone and what finds its record
    expect(at31).toMatchObject({ status: 410, code: 'resync_required' });
    const oldest = Date.parse((at31 as { details: { oldestUpdatedSince: string } }).details.oldestUpdatedSince);
    expect(oldest).toBeGreaterThanOrEqual(now - 30 * DAY);
    expect(oldest).toBeLessThanOrEqual(Date.now() - 30 * DAY);
    expect(at29.deletedContacts).toEqual([
      {
        id: recent.id,
        deletedAt: new Date(now - 28 * DAY).toISOString(),
        externalId: 'gone-28',
        phoneNumber: recent.phoneNumber,
        version: 2,
      },
    ]);
    // Without deletions asked for, nothing is missing: the walk answers as it always did.
    expect(contactsOnly.items).toEqual([]);
  });

  it("carries the walk's watermark in its uuid cursors: a change that became visible behind the walk is in the next walk from nextUpdatedSince", async () => {
    // Prepare: a contact last changed long ago, three new ones; a walk reads the first
    const tenantId = uuidv7();
    const since = new Date(Date.now() - 60_000).toISOString();
    const slow = (
      await createContact(
        tenantId,
        { displayName: 'Slow', phoneNumber: freshNumber() },
        new Date(Date.now() - 3_600_000),
      )
    ).contact;
    const fresh: Contact[] = [];
    for (let i = 0; i < 3; i += 1)
      fresh.push((await createContact(tenantId, { displayName: `Fresh ${i}`, phoneNumber: freshNumber() })).contact);
    const first = await changesSince(tenantId, since, { limit: 1 });
    // A write that took its time before the first page's last entry and became visible only after that page.
    await updateContact(tenantId, slow.id, { notes: 'late' }, new Date(Date.parse(fresh[0].updatedAt) - 5));

    // Act: the rest of the walk, five minutes later (the server's clock as the page is read), then a new walk
    const later = new Date(Date.now() + 5 * 60_000);
    const pages = [first];
    while (pages[pages.length - 1].nextCursor) {
      const cursor = pages[pages.length - 1].nextCursor!;
      pages.push(
        await listContacts(tenantId, { limit: 1, includeAutoCreated: true, updatedSince: since, cursor }, later),
      );
    }
    const last = pages[pages.length - 1];
    const next = await changesSince(tenantId, last.nextUpdatedSince!);

    // Assess: every cursor a uuid; this walk passed the late change, the next one sees it
    const cursors = pages.flatMap((page) => (page.nextCursor ? [page.nextCursor] : []));
    expect(cursors.every(isUuid)).toBe(true);
    expect(pages.flatMap((page) => page.items.map((c) => c.id))).toEqual(fresh.map((c) => c.id));
    expect(Date.parse(last.nextUpdatedSince!)).toBeLessThanOrEqual(Date.parse(fresh[0].updatedAt) - 5);
    expect(next.items.map((c) => c.id)).toContain(slow.id);
  });

  it('on a page whose entries are all settled, hands on the change id and a nextUpdatedSince a new walk can resume from', async () => {
    // Prepare: four changes, read as if ten minutes had passed (every entry older than the visibility bound)
    const tenantId = uuidv7();
    const since = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1)
      ids.push((await createContact(tenantId, { displayName: `Settled ${i}`, phoneNumber: freshNumber() })).contact.id);
    const asOf = new Date(Date.now() + 10 * 60_000);

    // Act: a first page of two, then a new walk from its nextUpdatedSince (its cursor dropped)
    const page = await listContacts(tenantId, { limit: 2, includeAutoCreated: true, updatedSince: since }, asOf);
    const resumed = await changesSince(tenantId, page.nextUpdatedSince!);

    // Assess: a UUIDv7 cursor (the change id), a watermark no later than the page's last entry, nothing lost
    expect(page.items.map((c) => c.id)).toEqual(ids.slice(0, 2));
    expect(page.nextCursor![14]).toBe('7');
    expect(Date.parse(page.nextUpdatedSince!)).toBeLessThanOrEqual(Date.parse(page.items[1].updatedAt));
    expect(resumed.items.map((c) => c.id)).toEqual(expect.arrayContaining(ids.slice(2)));
  });
});

describe('what a page of the feed costs', () => {
  const SMALL = 200;
  const LARGE = 1_000;
  let meter: ReadMeter;
  afterEach(() => meter?.stop());

  /**
   * `size` contacts changed one second apart, as createContact writes their rows (their claims and entries are not read
   * by the feed).
   */
  async function seedDirectory(size: number): Promise<string> {
    const tenantId = uuidv7();
    const rows = Array.from({ length: size }, (_, i) => {
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
      const contact: Contact = {
        id: uuidv7(Date.parse(at)),
        tenantId,
        displayName: `Person ${i}`,
        phoneNumber: numberFor(i),
        company: 'Acme',
        tag: null,
        notes: null,
        createdByAgentId: null,
        createdAt: at,
        updatedAt: at,
        normalizedNumber: numberFor(i),
        isAutoCreated: false,
        source: 'manual',
        consentStatus: 'unknown',
        consentSource: null,
        consentAt: null,
        consentNote: null,
        externalId: `e-${i}`,
        customFields: { i: String(i) },
        version: 1,
      };
      return toItem(contact);
    });
    await putInBatches(rows);
    return tenantId;
  }

  it(`examines limit + 1 index entries in one Query per page, at ${SMALL} and at ${LARGE} contacts`, async () => {
    // Prepare
    const [small, large] = [await seedDirectory(SMALL), await seedDirectory(LARGE)];
    meter = meterDynamoReads();
    const costOf = async (tenantId: string) => {
      meter.reset();
      const first = await changesSince(tenantId, '2026-01-01T00:00:00.000Z');
      const firstCost = meter.snapshot();
      meter.reset();
      const second = await changesSince(tenantId, '2026-01-01T00:00:00.000Z', { cursor: first.nextCursor! });
      return { firstCost, secondCost: meter.snapshot(), pages: [first.items.length, second.items.length] };
    };

    // Act
    const atSmall = await costOf(small);
    const atLarge = await costOf(large);

    // Assess: the same items and calls, whatever the directory's size
    for (const cost of [atSmall.firstCost, atSmall.secondCost, atLarge.firstCost, atLarge.secondCost])
      expect(cost).toMatchObject({ calls: 1, itemsExamined: 51 });
    expect([atSmall.pages, atLarge.pages]).toEqual([
      [50, 50],
      [50, 50],
    ]);
    expect(atLarge.firstCost.readUnits).toBeLessThanOrEqual(atSmall.firstCost.readUnits * 1.25);
  });
});
