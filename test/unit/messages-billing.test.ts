import 'aws-sdk-client-mock-jest';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { costCentsOf, segmentsOf, smsRateCentsOf } from '../../lambdas/contexts/texting/billing';
import { chargeRefusalOf, chargeShard, ensureSpendShards, headroomSlices, pickShard, refundShard, SPEND_SHARDS } from '../../lambdas/contexts/texting/spend';
import { TemporarilyUnavailableError } from '../../lambdas/shared/errors';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';

describe('segments', () => {
  it.each([
    ['a single GSM-7 character', 'a', 1],
    ['160 GSM-7 characters', 'a'.repeat(160), 1],
    ['161 GSM-7 characters: split into 153-septet parts', 'a'.repeat(161), 2],
    ['306 GSM-7 characters', 'a'.repeat(306), 2],
    ['307 GSM-7 characters', 'a'.repeat(307), 3],
    ['80 extension characters (2 septets each)', '€'.repeat(80), 1],
    ['81 extension characters', '€'.repeat(81), 2],
    ['GSM accents and Greek stay GSM-7', 'Ç'.repeat(80) + 'Δ'.repeat(80), 1],
  ])('%s -> GSM-7, %i segment(s)', (_name, body, segments) => {
    expect(segmentsOf(body)).toEqual({ encoding: 'GSM-7', segments });
  });

  it.each([
    ['70 UCS-2 characters', 'ж'.repeat(70), 1],
    ['71 UCS-2 characters: split into 67-unit parts', 'ж'.repeat(71), 2],
    ['134 UCS-2 characters', 'ж'.repeat(134), 2],
    ['135 UCS-2 characters', 'ж'.repeat(135), 3],
    ['one non-GSM character turns a GSM body into UCS-2', `${'a'.repeat(69)}ж`, 1],
    ['35 emoji are 70 UTF-16 code units', '😀'.repeat(35), 1],
    ['36 emoji are 72 code units', '😀'.repeat(36), 2],
  ])('%s -> UCS-2, %i segment(s)', (_name, body, segments) => {
    expect(segmentsOf(body)).toEqual({ encoding: 'UCS-2', segments });
  });

  it('never splits an escape pair or a surrogate pair across parts', () => {
    // Prepare: 152 septets, then an extension character that would straddle the 153-septet boundary.
    const gsm = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    // 66 code units, then an emoji (2 units) that would straddle the 67-unit boundary.
    const ucs = `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`;
    // Act & Assess
    expect(segmentsOf(gsm)).toEqual({ encoding: 'GSM-7', segments: 3 });
    expect(segmentsOf(ucs)).toEqual({ encoding: 'UCS-2', segments: 3 });
  });

  it('costs segments x the rate the organization row holds, and prices no row without a valid one', () => {
    // Act & Assess
    expect(costCentsOf('a'.repeat(161), 4)).toBe(8);
    expect(smsRateCentsOf({ smsRateCents: 3 })).toBe(3);
    for (const rate of [undefined, -1, 0, 1.5, 101]) expect(() => smsRateCentsOf({ id: 't1', smsRateCents: rate })).toThrow('holds no valid smsRateCents');
  });
});

describe('charging a spend shard', () => {
  const limited = { billingStatus: 'active' as const, spendingLimitCents: 10, version: 4 };

  it("is the send transaction's conditional update of one shard: policy version, billing status and headroom", () => {
    // Act
    const item = chargeShard(tenantId, 7, 2, limited);
    // Assess: the whole item, so a lost guard or a lost ALL_OLD fails here
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: { pk: `T#${tenantId}#SPEND#7`, sk: 'SPEND' },
        UpdateExpression: 'ADD #spend :cost, #headroom :minusCost',
        ConditionExpression: 'attribute_exists(pk) AND #version = :version AND #billingStatus = :active AND #headroom >= :cost',
        ExpressionAttributeNames: { '#spend': 'spendCents', '#version': 'policyVersion', '#billingStatus': 'billingStatus', '#headroom': 'headroomCents' },
        ExpressionAttributeValues: { ':cost': 2, ':version': 4, ':active': 'active', ':minusCost': -2 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('has no headroom guard when the organization has no limit, but still its version and status', () => {
    // Act
    const item = chargeShard(tenantId, 0, 1, { ...limited, spendingLimitCents: null }).Update!;
    // Assess
    expect(item.UpdateExpression).toBe('ADD #spend :cost');
    expect(item.ConditionExpression).toBe('attribute_exists(pk) AND #version = :version AND #billingStatus = :active');
  });

  it.each([
    ['no shard yet', undefined, 'noShards'],
    ['a shard behind the policy read', { shard: 1, policyVersion: 3, billingStatus: 'active', headroomCents: 50 }, 'policyChanged'],
    ['billing not active on the policy read', { shard: 1, policyVersion: 4, billingStatus: 'suspended', headroomCents: 50 }, 'billingBlocked'],
    ['not enough headroom on this shard', { shard: 1, policyVersion: 4, billingStatus: 'active', headroomCents: 1 }, 'noHeadroom'],
  ])('reads a refusal from the row DynamoDB returned: %s', (_name, oldRow, expected) => {
    // Act + Assess
    expect(chargeRefusalOf(oldRow, limited)).toBe(expected);
  });

  it('gives a refund back to the shard charged: spend down, headroom up, never refused for a limit', () => {
    // Act
    const item = refundShard(tenantId, 7, 3);
    // Assess
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: { pk: `T#${tenantId}#SPEND#7`, sk: 'SPEND' },
        UpdateExpression: 'ADD #spend :minusCost, #headroom :cost',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#spend': 'spendCents', '#headroom': 'headroomCents' },
        ExpressionAttributeValues: { ':cost': 3, ':minusCost': -3 },
      },
    });
  });
});

describe('splitting a limit over the shards', () => {
  it.each([
    [1_000, 0, 4, [250, 250, 250, 250]],
    [1_003, 0, 4, [251, 251, 251, 250]],
    [1_000, 998, 4, [1, 1, 0, 0]],
    [1_000, 1_200, 4, [0, 0, 0, 0]],
    [null, 50, 3, [0, 0, 0]],
  ])('limit %p with %p spent over %p shards -> %p: the slices add up to what is left', (limit, spent, shards, slices) => {
    // Act + Assess
    expect(headroomSlices(limit, spent, shards)).toEqual(slices);
  });

  it(`spreads sends over ${SPEND_SHARDS} shards`, () => {
    // Act
    const picked = [0, 0.5, 0.999999].map((r) => pickShard(() => r));
    // Assess
    expect(picked).toEqual([0, SPEND_SHARDS / 2, SPEND_SHARDS - 1]);
  });
});

describe('making the spend shards', () => {
  it('gives up with 503 after a few rounds when the organization row never shows its shards, instead of looping', async () => {
    // Prepare: a row made with another shard count, whose creation condition (no shards yet) always fails
    const row = { id: tenantId, spendShards: SPEND_SHARDS / 2, updatedAt: '2026-11-26T00:00:00.000Z', billingStatus: 'active' };
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }),
    );
    const readAgain = jest.fn(async () => row);

    // Act
    const made = ensureSpendShards(row, readAgain);

    // Assess
    await expect(made).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 4);
    expect(readAgain).toHaveBeenCalledTimes(4);
  });
});
