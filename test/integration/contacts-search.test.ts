import { ScanCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createTestTable } from '../support/table';
import { itemBytes, type WireItem } from '../../local/dynamodb-limits/item-size';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import {
  createContact,
  deleteContact,
  ensureContactForNumber,
  getContact,
  listContacts,
  updateContact,
} from '../../lambdas/contexts/contacts/contacts';
import { SEARCH_LIMITS, searchIndexOf } from '../../lambdas/contexts/contacts/search-terms';
import type { Contact } from '../../lambdas/contexts/contacts/schemas';

jest.setTimeout(120_000);
beforeAll(createTestTable);

const search = async (tenantId: string, text: string, options: { limit?: number; cursor?: string } = {}) =>
  listContacts(tenantId, {
    search: text,
    limit: options.limit ?? 50,
    cursor: options.cursor,
    includeAutoCreated: true,
  });
const namesFound = async (tenantId: string, text: string) =>
  (await search(tenantId, text)).items.map((c) => c.displayName);

/** Every search row of the organization, as contact id -> its entries (test code only: a Scan of this file's table). */
async function indexRows(tenantId: string): Promise<Map<string, string[]>> {
  const prefix = `T#${tenantId}#SEARCH#`;
  const byContact = new Map<string, string[]>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': prefix },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const row of page.Items ?? []) {
      const id = (row.sk as string).slice('CONTACT#'.length);
      byContact.set(id, [...(byContact.get(id) ?? []), (row.pk as string).slice(prefix.length)].sort());
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return byContact;
}

const entriesOf = (contact: Contact) => searchIndexOf(contact).tokens.sort();

/** The transactions the service sends while `act` runs (test code only). */
async function transactionsDuring(
  act: () => Promise<unknown>,
): Promise<NonNullable<TransactWriteCommandInput['TransactItems']>[]> {
  const seen: NonNullable<TransactWriteCommandInput['TransactItems']>[] = [];
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' || context.commandName === 'TransactWriteCommand') {
        seen.push((args.input as TransactWriteCommandInput).TransactItems ?? []);
      }
      return next(args);
    },
    { step: 'initialize', name: 'transactionSpy', override: true },
  );
  try {
    await act();
  } finally {
    dynamo.middlewareStack.remove('transactionSpy');
  }
  return seen;
}

describe('contact search from the index', () => {
  it('follows a contact through create, rename, renumber, adoption and delete, its rows always exactly its entries', async () => {
    // Prepare
    const tenantId = uuidv7();
    const { contact } = await createContact(tenantId, {
      displayName: 'Ada Lovelace',
      phoneNumber: '+14155550100',
      company: 'Analytical Engines',
    });
    const found = {
      created: await namesFound(tenantId, 'LOVE ana'),
      byNumber: await namesFound(tenantId, '(415) 555-01'),
      byLastDigits: await namesFound(tenantId, '0100'),
    };
    expect(await indexRows(tenantId)).toEqual(new Map([[contact.id, entriesOf(contact)]]));

    // Act: rename, renumber, then a number seen on a call is adopted by a POST
    const renamed = await updateContact(tenantId, contact.id, { displayName: 'Ada King' });
    const afterRename = { old: await namesFound(tenantId, 'lovelace'), now: await namesFound(tenantId, 'king') };
    const renumbered = await updateContact(tenantId, contact.id, { phoneNumber: '+442079460018' });
    const afterRenumber = {
      old: await namesFound(tenantId, '0100'),
      national: await namesFound(tenantId, '020 7946'.replace(/^0/, '')),
      international: await namesFound(tenantId, '+44 20 7946 0018'),
    };
    const autoId = await ensureContactForNumber(tenantId, '+16285550199', 'auto_inbound');
    const { contact: adopted } = await createContact(tenantId, {
      displayName: 'Grace Hopper',
      phoneNumber: '+16285550199',
      company: 'Navy',
    });
    const rowsBeforeDelete = await indexRows(tenantId);
    await deleteContact(tenantId, contact.id);

    // Assess
    expect(found).toEqual({ created: ['Ada Lovelace'], byNumber: ['Ada Lovelace'], byLastDigits: ['Ada Lovelace'] });
    expect(afterRename).toEqual({ old: [], now: ['Ada King'] });
    expect(afterRenumber).toEqual({ old: [], national: ['Ada King'], international: ['Ada King'] });
    expect(adopted.id).toBe(autoId);
    expect(rowsBeforeDelete).toEqual(
      new Map([
        [contact.id, entriesOf(renumbered)],
        [autoId, entriesOf(adopted)],
      ]),
    );
    expect(entriesOf(renamed)).not.toEqual(entriesOf(renumbered));
    expect(await indexRows(tenantId)).toEqual(new Map([[autoId, entriesOf(await getContact(tenantId, autoId))]]));
    expect(await namesFound(tenantId, 'navy')).toEqual(['Grace Hopper']);
    expect(await namesFound(tenantId, 'king')).toEqual([]);
  });

  it('keeps paging where it left off while contacts matching the search are created, renamed and deleted', async () => {
    // Prepare: seven members, newest first on the first page
    const tenantId = uuidv7();
    const members: Contact[] = [];
    for (let i = 1; i <= 7; i += 1) {
      members.push(
        (
          await createContact(
            tenantId,
            { displayName: `Member ${i}`, phoneNumber: `+1628555${String(i).padStart(4, '0')}`, company: 'Guild' },
            new Date(Date.UTC(2026, 0, i)),
          )
        ).contact,
      );
    }
    const first = await search(tenantId, 'guild', { limit: 3 });

    // Act: the cursor's own contact is deleted, the next one stops matching, a newer one appears, an older one is
    // renamed
    await deleteContact(tenantId, members[4].id);
    await updateContact(tenantId, members[3].id, { company: null });
    await createContact(tenantId, { displayName: 'Member 8', phoneNumber: '+16285550008', company: 'Guild' });
    await updateContact(tenantId, members[1].id, { displayName: 'Member Two' });
    const second = await search(tenantId, 'guild', { limit: 3, cursor: first.nextCursor as string });

    // Assess: no contact twice, none that still matches skipped
    expect(first.items.map((c) => c.displayName)).toEqual(['Member 7', 'Member 6', 'Member 5']);
    expect(first.nextCursor).toBe(members[4].id);
    expect(second.items.map((c) => c.displayName)).toEqual(['Member 3', 'Member Two', 'Member 1']);
    expect(second.nextCursor).toBeNull();
  });

  it('writes a bounded number of rows per create and per rename, and the largest change fits one transaction', async () => {
    // Prepare
    const tenantId = uuidv7();
    const long = (seed: string) =>
      Array.from({ length: 25 }, (_, i) => `${seed}${String.fromCharCode(97 + i)}word`)
        .join(' ')
        .slice(0, 200);
    let ada: Contact | undefined;

    // Act
    const [created] = await transactionsDuring(async () => {
      ada = (
        await createContact(tenantId, {
          displayName: 'Ada Lovelace',
          phoneNumber: '+14155550100',
          company: 'Analytical Engines',
        })
      ).contact;
    });
    const [renamed] = await transactionsDuring(() => updateContact(tenantId, ada!.id, { displayName: 'Ada King' }));
    const [largest] = await transactionsDuring(() =>
      updateContact(tenantId, ada!.id, { displayName: long('n'), company: long('c'), phoneNumber: '+886912345678901' }),
    );
    const [back] = await transactionsDuring(() =>
      updateContact(tenantId, ada!.id, { displayName: long('x'), company: long('y'), phoneNumber: '+14155550100' }),
    );

    // Assess: claim + contact + the check of its number's consent + entries; contact + changed entries; every row small
    // (one write unit, two in a transaction)
    expect(created).toHaveLength(3 + entriesOf(ada!).length);
    expect(created.length).toBeLessThanOrEqual(3 + SEARCH_LIMITS.maxEntries);
    expect(renamed).toHaveLength(1 + 6 + 4); // lovelace's 6 prefixes out, king's 4 in
    expect(largest.length).toBeLessThanOrEqual(100);
    expect(back.length).toBeLessThanOrEqual(100);
    // DynamoDB's size of each row (attribute names and values), as it charges writes: under 1 KB, one write unit.
    const sizes = [...created, ...largest].flatMap((item) =>
      item.Put ? [itemBytes(marshall(item.Put.Item, { removeUndefinedValues: true }) as WireItem)] : [],
    );
    expect(Math.max(...sizes)).toBeLessThan(1024);
    expect(await indexRows(tenantId)).toEqual(new Map([[ada!.id, entriesOf(await getContact(tenantId, ada!.id))]]));
  });
});
