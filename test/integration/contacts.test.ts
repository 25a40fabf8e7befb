import { createTestTable } from '../support/table';
import { retryWhileBusy } from '../support/busy-retry';
import { expectTransactionsMet, markRaceMeters } from '../support/engine-meters';
import {
  createContact,
  deleteContact,
  getContact,
  listContacts,
  updateContact,
} from '../../lambdas/contexts/contacts/contacts';
import { newContactRows } from '../../lambdas/contexts/contacts/contact-rows';
import { putInBatches } from '../support/scale-seed';
import { recordCall } from '../../lambdas/contexts/calls/calls';
import { ContactConflictError } from '../../lambdas/contexts/contacts/errors';
import { NotFoundError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';

const tenantId = uuidv7();
const otherTenantId = uuidv7();
const list = (query: Partial<Parameters<typeof listContacts>[1]> = {}, tenant = tenantId) =>
  listContacts(tenant, { limit: 50, includeAutoCreated: true, ...query });

// Real DynamoDB writes on the limits engine: seconds on a busy machine.
jest.setTimeout(60_000);

beforeAll(createTestTable);

describe('creating contacts', () => {
  it('creates a named contact and refuses a second one for the same number with the holder id', async () => {
    // Prepare / Act
    const { contact, adopted } = await createContact(tenantId, { displayName: 'Ada', phoneNumber: '+14155550100' });
    // Assess
    expect(adopted).toBe(false);
    expect(contact).toMatchObject({
      displayName: 'Ada',
      normalizedNumber: '+14155550100',
      isAutoCreated: false,
      source: 'manual',
    });
    const second = createContact(tenantId, { displayName: 'Other', phoneNumber: '+14155550100' });
    await expect(second).rejects.toBeInstanceOf(ContactConflictError);
    await expect(second).rejects.toMatchObject({ details: { contactId: contact.id } });
  });

  it('adopts the auto-created contact of a number seen on a call, keeping its id and source', async () => {
    const call = await recordCall(tenantId, {
      direction: 'inbound',
      fromNumber: '+14155550111',
      toNumber: '+14155559999',
      status: 'completed',
      startedAt: new Date('2026-10-01T10:00:00Z'),
    });
    const auto = await getContact(tenantId, call.contactId!);
    expect(auto).toMatchObject({ isAutoCreated: true, source: 'auto_inbound', displayName: '+14155550111' });

    const { contact, adopted } = await createContact(tenantId, {
      displayName: 'Grace',
      phoneNumber: '+14155550111',
      company: 'Navy',
    });

    expect(adopted).toBe(true);
    expect(contact).toMatchObject({
      id: auto.id,
      source: 'auto_inbound',
      isAutoCreated: false,
      displayName: 'Grace',
      company: 'Navy',
    });
    await expect(createContact(tenantId, { displayName: 'Again', phoneNumber: '+14155550111' })).rejects.toMatchObject({
      details: { contactId: auto.id },
    });
  });

  it('never makes two rows for one number when creates race', async () => {
    const meters = await markRaceMeters();
    // Eight transactions on one claim: on a busy machine some keep colliding past their retries and
    // are answered busy (503, nothing written); a client sends those again, and they meet the winner.
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        retryWhileBusy(() => createContact(tenantId, { displayName: `Racer ${i}`, phoneNumber: '+14155550122' })),
      ),
    );
    const created = attempts.filter((a) => a.status === 'fulfilled');
    const conflicts = attempts.filter((a) => a.status === 'rejected' && a.reason instanceof ContactConflictError);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(7);
    const rows = (await list({ search: '4155550122' })).items;
    expect(rows).toHaveLength(1);
    await expectTransactionsMet(meters); // the creates' transactions met on the claim
  });

  it('bulk-loads from newContactRows a contact the service treats as one it created: found, searchable, its number held', async () => {
    // Prepare: the rows the bench's scale section batch-writes
    const input = { displayName: 'Barbara Bulk', phoneNumber: '+14155550133', company: 'Loaded Ltd' };
    await putInBatches(newContactRows(tenantId, input, new Date('2026-11-01T00:00:00Z')));
    // Act
    const [byName, byCompany, byDigits] = await Promise.all([
      list({ search: 'barb' }),
      list({ search: 'loaded' }),
      list({ search: '555 0133' }),
    ]);
    const again = await createContact(tenantId, { displayName: 'Other', phoneNumber: '+14155550133' }).catch(
      (err: unknown) => err,
    );
    // Assess
    const loaded = byName.items[0];
    expect(byName.items).toHaveLength(1);
    expect(loaded).toMatchObject({
      ...input,
      normalizedNumber: '+14155550133',
      source: 'manual',
      isAutoCreated: false,
      createdAt: '2026-11-01T00:00:00.000Z',
    });
    expect([byCompany.items.map((c) => c.id), byDigits.items.map((c) => c.id)]).toEqual([[loaded.id], [loaded.id]]);
    expect(await getContact(tenantId, loaded.id)).toEqual(loaded);
    expect(again).toBeInstanceOf(ContactConflictError);
    expect(again).toMatchObject({ details: { contactId: loaded.id } });
  });
});

describe('changing and deleting contacts', () => {
  it('moves the number claim on a number change, frees the old number and refuses a taken one', async () => {
    const { contact: a } = await createContact(tenantId, { displayName: 'Mover', phoneNumber: '+14155550130' });
    const { contact: b } = await createContact(tenantId, { displayName: 'Holder', phoneNumber: '+14155550131' });

    const moved = await updateContact(tenantId, a.id, { phoneNumber: '+14155550132', tag: 'vip' });
    await expect(updateContact(tenantId, a.id, { phoneNumber: '+14155550131' })).rejects.toMatchObject({
      details: { contactId: b.id },
    });
    const reuse = await createContact(tenantId, { displayName: 'Reuser', phoneNumber: '+14155550130' });

    expect(moved).toMatchObject({ normalizedNumber: '+14155550132', tag: 'vip', displayName: 'Mover' });
    expect(reuse.adopted).toBe(false);
  });

  it('deletes a contact and its claim together', async () => {
    const { contact } = await createContact(tenantId, { displayName: 'Gone', phoneNumber: '+14155550140' });
    await deleteContact(tenantId, contact.id);
    await expect(getContact(tenantId, contact.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteContact(tenantId, contact.id)).rejects.toBeInstanceOf(NotFoundError);
    const again = await createContact(tenantId, { displayName: 'Back', phoneNumber: '+14155550140' });
    expect(again.adopted).toBe(false);
  });
});

describe('listing contacts', () => {
  it('pages newest first with nextCursor null exactly on the last page, across a deleted cursor row', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const at = new Date(Date.UTC(2030, 0, 1, 0, 0, i));
      ids.push(
        (await createContact(otherTenantId, { displayName: `P${i}`, phoneNumber: `+1415555020${i}` }, at)).contact.id,
      );
    }
    const first = await list({ limit: 2 }, otherTenantId);
    await deleteContact(otherTenantId, first.nextCursor!);
    const second = await list({ limit: 2, cursor: first.nextCursor! }, otherTenantId);
    const third = await list({ limit: 2, cursor: second.nextCursor! }, otherTenantId);

    expect(first.items.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    expect(second.items.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    expect(third.items.map((c) => c.id)).toEqual([ids[0]]);
    expect(third.nextCursor).toBeNull();
    expect((await list({ limit: 4 }, otherTenantId)).nextCursor).toBeNull();
  });

  it('searches name and company case-insensitively and numbers by digits; hides auto-created on request', async () => {
    const call = await recordCall(tenantId, {
      direction: 'outbound',
      fromNumber: '+14155559999',
      toNumber: '+14155550150',
      status: 'no-answer',
      startedAt: new Date('2026-10-02T10:00:00Z'),
    });
    const hits = await list({ search: 'NAVY' });
    const byDigits = await list({ search: '555 0111' });
    const named = await list({ includeAutoCreated: false, limit: 100 });
    const all = await list({ limit: 100 });

    expect(hits.items.map((c) => c.displayName)).toEqual(['Grace']);
    expect(byDigits.items.map((c) => c.displayName)).toEqual(['Grace']);
    expect(named.items.every((c) => !c.isAutoCreated)).toBe(true);
    expect(all.items.find((c) => c.id === call.contactId)).toMatchObject({
      isAutoCreated: true,
      source: 'auto_outbound',
    });
    expect(named.items.find((c) => c.id === call.contactId)).toBeUndefined();
  });
});
