import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { tenantKey } from '../../lambdas/contexts/tenants/tenants';
import { isSettling, SettlementLease, spendPolicyOf } from '../../lambdas/contexts/texting/spend-lease';

/**
 * The settlement lease's answers to DynamoDB's refusals (texting/spend-lease.ts): a failed condition is "held" or
 * "no longer mine"; anything else is the caller's to see. Its behaviour on the engine is
 * integration/spend-lease.test.ts's.
 */
const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const TENANT = '0199a000-0000-7000-8000-000000000001';
const lease = new SettlementLease(TENANT);
const held = { holder: 'h', untilMs: 1, fence: 1 };
const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' });

describe('the settlement lease', () => {
  it('answers a claim another writer holds with no lease, and lets any other failure through', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejectsOnce(conditionFailed()).rejectsOnce(throttled());
    // Act + Assess
    await expect(lease.claim()).resolves.toBeUndefined();
    await expect(lease.claim()).rejects.toThrow('Rate exceeded');
  });

  it('lets a release go when the lease is no longer its holder’s, and lets any other failure through', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejectsOnce(conditionFailed()).rejectsOnce(throttled());
    // Act + Assess
    await expect(lease.release(held)).resolves.toBeUndefined();
    await expect(lease.release(held)).rejects.toThrow('Rate exceeded');
  });
});

describe('the commands of the settlement lease', () => {
  it('claims with one conditional update of the organization row: free or run out, a new holder and a higher fence', async () => {
    // Prepare
    ddb.on(UpdateCommand).resolves({ Attributes: { spendSettlementFence: 4 } });
    // Act
    const claimed = await lease.claim(1_000, 5_000);
    // Assess
    expect(claimed).toEqual({ holder: expect.stringMatching(/^5000-[0-9a-z]+$/), untilMs: 6_000, fence: 4 });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: TABLE_NAME,
      Key: tenantKey(TENANT),
      UpdateExpression:
        'SET #spendSettlingUntil = :set_spendSettlingUntil, #spendSettlingHolder = :set_spendSettlingHolder' +
        ' ADD #spendSettlementFence :add_spendSettlementFence',
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(#spendSettlingUntil) OR #spendSettlingUntil < :now)',
      ExpressionAttributeValues: {
        ':set_spendSettlingUntil': 6_000,
        ':set_spendSettlingHolder': claimed!.holder,
        ':add_spendSettlementFence': 1,
        ':now': 5_000,
      },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('names each claim apart, so a holder whose lease was taken over cannot give back the new one', async () => {
    // Prepare
    ddb.on(UpdateCommand).resolves({ Attributes: { spendSettlementFence: 1 } });
    // Act
    const [a, b] = [await lease.claim(1_000, 5_000), await lease.claim(1_000, 5_000)];
    // Assess
    expect(a!.holder).not.toBe(b!.holder);
  });

  it('gives the lease back only while the row still names its holder', async () => {
    // Prepare
    ddb.on(UpdateCommand).resolves({});
    // Act
    await lease.release(held);
    // Assess
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: TABLE_NAME,
      Key: tenantKey(TENANT),
      UpdateExpression: 'REMOVE #spendSettlingUntil, #spendSettlingHolder',
      ConditionExpression: '#spendSettlingHolder = :holder',
      ExpressionAttributeNames: {
        '#spendSettlingUntil': 'spendSettlingUntil',
        '#spendSettlingHolder': 'spendSettlingHolder',
      },
      ExpressionAttributeValues: { ':holder': 'h' },
    });
  });

  it('reads the billing policy and the lease from the organization row, strongly consistent', async () => {
    // Prepare
    const row = { ...tenantKey(TENANT), billingStatus: 'active', spendingLimitCents: 10, limitVersion: 3 };
    ddb.on(GetCommand).resolves({ Item: { ...row, spendSettlingUntil: 9_000 } });
    // Act
    const policy = await lease.readPolicy();
    // Assess
    expect(policy).toEqual({ billingStatus: 'active', spendingLimitCents: 10, version: 3, settlingUntil: 9_000 });
    expect(spendPolicyOf(row).settlingUntil).toBeNull();
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      TableName: TABLE_NAME,
      Key: tenantKey(TENANT),
      ConsistentRead: true,
    });
  });

  it('counts as under way while its time has not passed, the last millisecond included', () => {
    // Act + Assess
    const policy = { billingStatus: 'active' as const, spendingLimitCents: null, version: 0 };
    expect(isSettling({ ...policy, settlingUntil: 1_000 }, 1_000)).toBe(true);
    expect(isSettling({ ...policy, settlingUntil: 1_000 }, 1_001)).toBe(false);
    expect(isSettling({ ...policy, settlingUntil: null }, 0)).toBe(false);
    expect(isSettling(policy, 0)).toBe(false);
  });
});

describe('waiting out the lease', () => {
  const row = (settlingUntil?: number) => ({
    ...tenantKey(TENANT),
    billingStatus: 'active',
    limitVersion: 1,
    ...(settlingUntil !== undefined && { spendSettlingUntil: settlingUntil }),
  });

  it('reads the row again until no writer holds the lease, and answers the policy it then read', async () => {
    // Prepare: held at the first two reads, given back at the third
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: row(Date.now() + 60_000) })
      .resolvesOnce({ Item: row(Date.now() + 60_000) })
      .resolves({ Item: row() });
    // Act
    const policy = await lease.waitOut();
    // Assess
    expect(policy.settlingUntil).toBeNull();
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 3);
  });

  it('stops at its deadline, answering the policy with the lease still held', async () => {
    // Prepare
    const until = Date.now() + 60_000;
    ddb.on(GetCommand).resolves({ Item: row(until) });
    const deadline = Date.now() + 100;
    // Act
    const policy = await lease.waitOut(deadline);
    // Assess
    expect(policy.settlingUntil).toBe(until);
    expect(Date.now()).toBeGreaterThan(deadline);
  });
});
