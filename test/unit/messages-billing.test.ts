import { chargeRefusal, chargeUpdate, costCentsOf, DEFAULT_SMS_RATE_CENTS, refundUpdate, segmentsOf, smsRateCentsOf } from '../../lambdas/contexts/texting/billing';
import { BillingBlockedError, SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';

const tenantId = '0199a000-0000-7000-8000-000000000001';
const tenantRowKey = { pk: `T#${tenantId}`, sk: 'TENANT' };

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
    // 152 septets, then an extension character that would straddle the 153-septet boundary.
    const gsm = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    // 66 code units, then an emoji (2 units) that would straddle the 67-unit boundary.
    const ucs = `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`;

    expect(segmentsOf(gsm)).toEqual({ encoding: 'GSM-7', segments: 3 });
    expect(segmentsOf(ucs)).toEqual({ encoding: 'UCS-2', segments: 3 });
  });

  it('costs segments x rate, with the default rate when the organization row has none', () => {
    expect(costCentsOf('a'.repeat(161), 4)).toBe(8);
    expect(smsRateCentsOf({ smsRateCents: 3 })).toBe(3);
    expect(smsRateCentsOf({})).toBe(DEFAULT_SMS_RATE_CENTS);
    expect(smsRateCentsOf({ smsRateCents: -1 })).toBe(DEFAULT_SMS_RATE_CENTS);
  });
});

describe('charging', () => {
  it("is the send transaction's conditional update of the organization row: status, limit and the added cost", () => {
    // Act
    const item = chargeUpdate(tenantId, 2, { spendingLimitCents: 10 }).Update!;
    // Assess
    expect(item).toMatchObject({
      Key: tenantRowKey,
      UpdateExpression: 'ADD #spend :cost',
      ConditionExpression: 'attribute_exists(pk) AND #billingStatus = :active AND #limit = :limit AND (attribute_not_exists(#spend) OR #spend <= :maxSpendBefore)',
      ExpressionAttributeValues: { ':cost': 2, ':active': 'active', ':limit': 10, ':maxSpendBefore': 8 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('has no spend bound when the organization has no limit', () => {
    expect(chargeUpdate(tenantId, 1, { spendingLimitCents: null }).Update).toMatchObject({
      ConditionExpression: 'attribute_exists(pk) AND #billingStatus = :active AND (attribute_not_exists(#limit) OR attribute_type(#limit, :nullType))',
      ExpressionAttributeValues: { ':cost': 1, ':active': 'active', ':nullType': 'NULL' },
    });
  });

  it('reads a refusal from the row it returned: billing blocked, limit reached, or a limit the operator changed', () => {
    expect(chargeRefusal({ billingStatus: 'suspended', spendingLimitCents: null, spendCents: 0 }, { spendingLimitCents: null })).toBeInstanceOf(BillingBlockedError);
    expect(chargeRefusal({ billingStatus: 'active', spendingLimitCents: 5, spendCents: 5 }, { spendingLimitCents: 5 })).toBeInstanceOf(SpendingLimitReachedError);
    expect(chargeRefusal({ billingStatus: 'active', spendingLimitCents: 20, spendCents: 5 }, { spendingLimitCents: 5 })).toEqual({ limitChanged: { spendingLimitCents: 20 } });
    expect(chargeRefusal(undefined, { spendingLimitCents: 5 })).toEqual(new Error('charge: the organization row is missing'));
  });

  it('refunds with an atomic ADD of the negative cost, for the transaction that fails the text', () => {
    expect(refundUpdate(tenantId, 3).Update).toMatchObject({ Key: tenantRowKey, UpdateExpression: 'ADD #spend :refund', ExpressionAttributeValues: { ':refund': -3 } });
  });
});
