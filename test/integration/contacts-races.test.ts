import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { createContact, deleteContact, ensureContactForNumber, numberClaimKey, updateContact } from '../../lambdas/contexts/contacts/contacts';
import { ContactConflictError } from '../../lambdas/contexts/contacts/errors';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';

/**
 * Adoption racing a renumber onto the same number: whatever the interleaving, exactly one contact
 * holds the number, its claim names it, and a later create gets 409 with that owner's id. Each
 * scenario runs 25 rounds on fresh numbers, so a race that breaks an invariant would show.
 */
const ROUNDS = 25;
// Many rounds of real DynamoDB writes: seconds alone, longer when the whole suite shares 2 cores.
jest.setTimeout(60_000);
let tenantId: string;
let serial = 0;
const freshNumber = () => `+1415777${String((serial += 1)).padStart(4, '0')}`;

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Races Org' })).id;
});

/** Every contact row holding `number` (a read of the whole directory: test code only). */
async function holdersOf(number: string): Promise<string[]> {
  const ids: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':prefix': 'CONTACT#' },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) if (item.normalizedNumber === number) ids.push(item.id as string);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return ids;
}

async function expectOneOwner(number: string): Promise<string> {
  const holders = await holdersOf(number);
  const { Item: claim } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }));
  expect(holders).toHaveLength(1);
  expect(claim?.contactId).toBe(holders[0]);
  // A later create meets the owner.
  const later = await createContact(tenantId, { displayName: 'Latecomer', phoneNumber: number }).catch((err: unknown) => err);
  if (later instanceof ContactConflictError) expect(later.details).toEqual({ contactId: holders[0] });
  else expect(later).toMatchObject({ adopted: true, contact: { id: holders[0] } }); // still auto-created: adopted
  return holders[0];
}

describe('adoption racing a renumber onto the same number', () => {
  it('leaves exactly one owner, named by the claim, every round', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      // Prepare: an auto-created contact holds N; a named contact holds M
      const n = freshNumber();
      const autoId = await ensureContactForNumber(tenantId, n, 'auto_inbound');
      const { contact: named } = await createContact(tenantId, { displayName: `Named ${round}`, phoneNumber: freshNumber() });
      // Act
      const [adopted, renumbered] = await Promise.allSettled([
        createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
        updateContact(tenantId, named.id, { phoneNumber: n }),
      ]);
      // Assess: the adoption wins (the number is claimed already, so the renumber is a 409) and nothing is left half-moved
      expect(adopted).toMatchObject({ status: 'fulfilled', value: { adopted: true, contact: { id: autoId } } });
      expect(renumbered).toMatchObject({ status: 'rejected', reason: expect.any(ContactConflictError) });
      expect(await expectOneOwner(n)).toBe(autoId);
      expect(await holdersOf(named.phoneNumber)).toEqual([named.id]);
    }
  });

  it('never leaves two owners or a claim out of step when the auto-created contact is deleted while both race', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const n = freshNumber();
      const autoId = await ensureContactForNumber(tenantId, n, 'auto_outbound');
      const { contact: named } = await createContact(tenantId, { displayName: `Mover ${round}`, phoneNumber: freshNumber() });

      const results = await Promise.allSettled([
        createContact(tenantId, { displayName: `Adopter ${round}`, phoneNumber: n }),
        updateContact(tenantId, named.id, { phoneNumber: n }),
        deleteContact(tenantId, autoId),
      ]);
      // Assess: the delete may win last (it names the very contact the adoption named), leaving
      // the number free; never two holders, never a claim without its holder or a holder without its claim.
      const holders = await holdersOf(n);
      const { Item: claim } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, n), ConsistentRead: true }));
      expect(holders.length).toBeLessThanOrEqual(1);
      expect(claim?.contactId).toBe(holders[0]);
      if (holders.length === 1) {
        await expectOneOwner(n);
      } else {
        expect(results[2].status).toBe('fulfilled'); // only the delete can have freed it
        await expect(createContact(tenantId, { displayName: 'Fresh', phoneNumber: n })).resolves.toMatchObject({ adopted: false });
      }
    }
  });

  it('lets exactly one of two renumbers onto a free number win, the other 409 naming the winner', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const n = freshNumber();
      const { contact: a } = await createContact(tenantId, { displayName: `A ${round}`, phoneNumber: freshNumber() });
      const { contact: b } = await createContact(tenantId, { displayName: `B ${round}`, phoneNumber: freshNumber() });

      const results = await Promise.allSettled([updateContact(tenantId, a.id, { phoneNumber: n }), updateContact(tenantId, b.id, { phoneNumber: n })]);

      const owner = await expectOneOwner(n);
      const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(loser.reason).toBeInstanceOf(ContactConflictError);
      expect((loser.reason as ContactConflictError).details).toEqual({ contactId: owner });
      // The loser kept its own number and claim.
      const loserId = owner === a.id ? b.id : a.id;
      expect(await holdersOf(owner === a.id ? b.phoneNumber : a.phoneNumber)).toEqual([loserId]);
    }
  });
});
