import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { numberFor } from '../support/scale-seed';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import { deleteContacts, type DeleteEntry } from '../../lambdas/contexts/contacts/contact-batch-delete';
import { readExternalIdClaim, readNumberClaim } from '../../lambdas/contexts/contacts/contact-claims';
import { tombstoneKey } from '../../lambdas/contexts/contacts/contact-rows';
import { createContact, deleteContact, getContact, listContacts } from '../../lambdas/contexts/contacts/contacts';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import type { Contact, ContactDeleteItemInput } from '../../lambdas/contexts/contacts/schemas';

/**
 * POST /contacts/batch/delete in the domain (issue 38, part 8), on DynamoDB Local and on the
 * limits-faithful engine (jest.config.js, ON_BOTH_ENGINES): each item deleted by the single
 * delete, one tombstone and one `contact.deleted` each, items naming one contact deleting it once,
 * and the deadline.
 */
beforeAll(createTestTable);

let serial = 0;
const freshNumber = () => numberFor((serial += 1), '+1629');

const entries = (items: ContactDeleteItemInput[]): DeleteEntry[] => items.map((item, index) => ({ index, item }));

const named = async (tenantId: string, externalId: string) =>
  (await createContact(tenantId, { displayName: externalId, phoneNumber: freshNumber(), externalId })).contact;

/** The tombstone row of a contact, and the event the webhook router derives from its insert (its stream record). */
async function tombstoneOf(tenantId: string, contactId: string) {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: tombstoneKey(tenantId, contactId), ConsistentRead: true }),
  );
  const event =
    Item &&
    deriveEvent({ eventId: `s-${contactId}`, eventName: 'INSERT', approximateCreationMs: Date.now(), newImage: Item });
  return { row: Item, event };
}

describe('a batch delete', () => {
  it('by id and by external id: deleted three times and not_found once, with a tombstone and a contact.deleted each', async () => {
    // Prepare
    const tenantId = uuidv7();
    const since = new Date(Date.now() - 1).toISOString();
    const [a, b, c] = await Promise.all([named(tenantId, 'del-a'), named(tenantId, 'del-b'), named(tenantId, 'del-c')]);

    // Act
    const results = await deleteContacts(
      tenantId,
      entries([{ id: a.id }, { externalId: 'del-b' }, { externalId: 'del-nobody' }, { id: c.id }]),
    );

    // Assess: the answers, in order
    expect(results).toEqual([
      { index: 0, status: 'deleted', contactId: a.id, externalId: null, error: null, code: null },
      { index: 1, status: 'deleted', contactId: b.id, externalId: 'del-b', error: null, code: null },
      {
        index: 2,
        status: 'not_found',
        contactId: null,
        externalId: 'del-nobody',
        error: 'contacts[2].externalId: no contact holds this external id',
        code: 'not_found',
      },
      { index: 3, status: 'deleted', contactId: c.id, externalId: null, error: null, code: null },
    ]);
    // Gone, their number and external id free again
    for (const contact of [a, b, c]) {
      await expect(getContact(tenantId, contact.id)).rejects.toThrow('Contact not found');
      expect(await readNumberClaim(tenantId, contact.normalizedNumber!)).toBeUndefined();
      expect(await readExternalIdClaim(tenantId, contact.externalId!)).toBeUndefined();
    }
    // One tombstone each in the feed, and the event each tombstone raises
    const feed = await listContacts(tenantId, {
      limit: 50,
      includeAutoCreated: true,
      updatedSince: since,
      includeDeleted: true,
    });
    expect(feed.deletedContacts!.map((gone) => gone.id).sort()).toEqual([a.id, b.id, c.id].sort());
    for (const contact of [a, b, c]) {
      const { row, event } = await tombstoneOf(tenantId, contact.id);
      expect(row).toBeDefined();
      expect(JSON.parse(event!.body)).toMatchObject({ type: 'contact.deleted', data: { contact: { id: contact.id } } });
    }
  });

  it('items naming one contact (twice by id, twice by external id, once by each) delete it once: the first answers, the later ones are not_found naming it', async () => {
    // Prepare
    const tenantId = uuidv7();
    const [a, b] = await Promise.all([named(tenantId, 'dup-a'), named(tenantId, 'dup-b')]);
    const unknown = uuidv7();

    // Act
    const results = await deleteContacts(
      tenantId,
      entries([
        { externalId: 'dup-a' },
        { id: a.id },
        { id: b.id },
        { id: b.id },
        { externalId: 'dup-a' },
        { id: unknown },
        { id: unknown },
      ]),
    );

    // Assess
    expect(results.map((r) => [r.status, r.contactId, r.error])).toEqual([
      ['deleted', a.id, null],
      ['not_found', a.id, 'contacts[1].id: names the contact of contacts[0], which answers for it'],
      ['deleted', b.id, null],
      ['not_found', b.id, 'contacts[3].id: names the contact of contacts[2], which answers for it'],
      ['not_found', a.id, 'contacts[4].externalId: names the contact of contacts[0], which answers for it'],
      ['not_found', unknown, 'contacts[5].id: no contact has this id'],
      ['not_found', unknown, 'contacts[6].id: names the contact of contacts[5], which answers for it'],
    ]);
    expect((await tombstoneOf(tenantId, a.id)).row).toBeDefined();
  });

  it('deletes the contact that took an external id after the batch read it, when the one it read was deleted meanwhile', async () => {
    // Prepare: between the batch's read of "move-1" and its delete, the contact holding it is deleted and another
    // takes the id (the item's delete finds the first gone and reads the id again)
    const tenantId = uuidv7();
    const first = await named(tenantId, 'move-1');
    let second: Contact | undefined;
    let armed = true;
    const middleware = 'delete-and-retake-after-the-batch-read';
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        const output = await next(args);
        if (armed && 'RequestItems' in (args.input as object)) {
          armed = false;
          await deleteContact(tenantId, first.id);
          second = await named(tenantId, 'move-1');
        }
        return output;
      },
      { step: 'initialize', name: middleware },
    );

    // Act
    const results = await deleteContacts(tenantId, entries([{ externalId: 'move-1' }])).finally(() =>
      dynamo.middlewareStack.remove(middleware),
    );

    // Assess
    expect(results.map((r) => [r.status, r.contactId])).toEqual([['deleted', second!.id]]);
    expect(await readExternalIdClaim(tenantId, 'move-1')).toBeUndefined();
  });

  it('passes invalid entries through at their index, and answers unavailable what it has no time left for, deleting nothing', async () => {
    // Prepare
    const tenantId = uuidv7();
    const kept = await named(tenantId, 'late-1');

    // Act: a deadline already passed
    const results = await deleteContacts(
      tenantId,
      [
        { index: 0, item: { id: kept.id } },
        { index: 1, invalid: 'contacts[1].id: is required (or externalId)' },
        { index: 2, item: { externalId: 'late-1' } },
      ],
      Date.now() - 1,
    );

    // Assess
    expect(results.map((r) => [r.index, r.status, r.code, r.contactId])).toEqual([
      [0, 'unavailable', 'temporarily_unavailable', kept.id],
      [1, 'invalid', 'validation_failed', null],
      [2, 'unavailable', 'temporarily_unavailable', null],
    ]);
    expect((await getContact(tenantId, kept.id)).id).toBe(kept.id);
  });
});
