import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { resolveOrganization } from '../../lambdas/contexts/carrier/organization';
import { NumberTakenError } from '../../lambdas/contexts/tenants/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import { DEFAULT_QUIET_HOURS } from '../../lambdas/contexts/tenants/quiet-hours-policy';
import {
  createTenant,
  findTenantIdByNumber,
  getTenant,
  numberOwnerKey,
  tenantKey,
  toItem,
  updateTenant,
} from '../../lambdas/contexts/tenants/tenants';

let seq = 0;
/** A number no other test of this file uses. */
const freshNumber = () => `+1628555${String((seq += 1)).padStart(4, '0')}`;

beforeAll(createTestTable);

describe('number -> organization lookup rows', () => {
  it('are written with the organization for its numbers and its SMS number', async () => {
    // Prepare
    const [voice, sms] = [freshNumber(), freshNumber()];
    // Act
    const tenant = await createTenant({ name: 'Numbers Org', numbers: [voice], smsNumber: sms });
    // Assess
    expect(tenant.numbers).toEqual([voice, sms]);
    expect(await findTenantIdByNumber(voice)).toBe(tenant.id);
    expect(await findTenantIdByNumber(sms)).toBe(tenant.id);
    expect(await findTenantIdByNumber(freshNumber())).toBeUndefined();
  });

  it('follow numbers added later, and an update keeps the numbers it already had', async () => {
    // Prepare
    const [first, added, sms] = [freshNumber(), freshNumber(), freshNumber()];
    const tenant = await createTenant({ name: 'Growing Org', numbers: [first] });
    // Act
    const updated = await updateTenant(tenant.id, { addNumbers: [added], smsNumber: sms });
    // Assess
    expect(updated.numbers).toEqual([first, added, sms]);
    for (const number of [first, added, sms]) expect(await findTenantIdByNumber(number)).toBe(tenant.id);
  });

  it('refuses a number another organization owns, writing neither the organization nor the row', async () => {
    // Prepare
    const taken = freshNumber();
    const owner = await createTenant({ name: 'Owner Org', numbers: [taken] });
    const other = await createTenant({ name: 'Other Org', numbers: [freshNumber()] });
    // Act
    const create = createTenant({ name: 'Squatter Org', numbers: [freshNumber(), taken] });
    const update = updateTenant(other.id, { addNumbers: [taken], name: 'Renamed' });
    // Assess
    await expect(create).rejects.toBeInstanceOf(NumberTakenError);
    await expect(update).rejects.toEqual(new NumberTakenError(taken));
    expect(await findTenantIdByNumber(taken)).toBe(owner.id);
    expect(await getTenant(other.id)).toMatchObject({ name: 'Other Org', numbers: other.numbers });
  });

  it('lets exactly one of several organizations claiming one number at once have it', async () => {
    // Prepare
    const contested = freshNumber();
    // Act
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => createTenant({ name: `Racer ${i}`, smsNumber: contested })),
    );
    // Assess
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason instanceof NumberTakenError),
    ).toBe(true);
    expect(await findTenantIdByNumber(contested)).toBe((won[0] as PromiseFulfilledResult<{ id: string }>).value.id);
  });

  it('are written for an organization registered before they existed as soon as it is updated', async () => {
    // Prepare: an organization row with a number and no lookup row, as older data has it.
    const old = freshNumber();
    const id = uuidv7();
    const now = new Date().toISOString();
    await dynamo.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: toItem({
          id,
          name: 'Old Org',
          slug: 'old-org',
          plan: 'pro',
          quietHours: DEFAULT_QUIET_HOURS,
          smsNumber: old,
          numbers: [old],
          billingStatus: 'active',
          spendingLimitCents: null,
          smsRateCents: 1,
          approvedHosts: [],
          createdAt: now,
          updatedAt: now,
        }),
      }),
    );
    // Act
    await updateTenant(id, { name: 'Old Org, renamed' });
    // Assess
    expect(await findTenantIdByNumber(old)).toBe(id);
  });

  it('refuses a number that is not E.164', async () => {
    // Act + Assess
    await expect(createTenant({ name: 'Sloppy Org', numbers: ['(415) 555-0100'] })).rejects.toThrow(
      'numbers: each must be an E.164',
    );
  });

  it('live outside every tenant partition, naming only the organization', async () => {
    // Prepare
    const number = freshNumber();
    const tenant = await createTenant({ name: 'Lookup Org', numbers: [number] });
    // Act
    const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberOwnerKey(number) }));
    // Assess
    expect(Item).toEqual({
      pk: `NUMBER_OWNER#${number}`,
      sk: 'OWNER',
      type: 'numberOwner',
      tenantId: tenant.id,
      number,
    });
    expect(tenantKey(tenant.id).pk).not.toBe(Item!.pk);
  });
});

describe('finding the organization of a callback', () => {
  it('takes the organization of the most telling number and marks its numbers as its own', async () => {
    // Prepare
    const [mine, alsoMine, theirs] = [freshNumber(), freshNumber(), freshNumber()];
    const tenant = await createTenant({ name: 'Resolve Org', numbers: [mine, alsoMine] });
    await createTenant({ name: 'Their Org', numbers: [theirs] });
    // Act
    const resolution = await resolveOrganization({ ownNumbers: [mine], legNumbers: [theirs, mine, alsoMine] });
    // Assess
    expect(resolution).toEqual({
      found: true,
      organization: { tenantId: tenant.id, orgNumbers: new Set([mine, alsoMine]), via: 'number' },
    });
  });

  it('refuses a signed tenantId that contradicts the number, and one naming no organization', async () => {
    // Prepare
    const number = freshNumber();
    await createTenant({ name: 'Hinted Org', numbers: [number] });
    const other = await createTenant({ name: 'Unrelated Org' });
    // Act
    const conflict = await resolveOrganization({ ownNumbers: [number], legNumbers: [number], tenantHint: other.id });
    const nobody = await resolveOrganization({ ownNumbers: [], legNumbers: [], tenantHint: uuidv7() });
    // Assess
    expect(conflict).toEqual({ found: false, reason: 'conflict' });
    expect(nobody).toEqual({ found: false, reason: 'unknown' });
  });
});
