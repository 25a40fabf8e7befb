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
    // Prepare: 152 septets, then an extension character that would straddle the 153-septet boundary.
    const gsm = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    // 66 code units, then an emoji (2 units) that would straddle the 67-unit boundary.
    const ucs = `${'ж'.repeat(66)}😀${'ж'.repeat(66)}`;
    // Act & Assess
    expect(segmentsOf(gsm)).toEqual({ encoding: 'GSM-7', segments: 3 });
    expect(segmentsOf(ucs)).toEqual({ encoding: 'UCS-2', segments: 3 });
  });

  it('costs segments x rate, with the default rate when the organization row has none', () => {
    // Act & Assess
    expect(costCentsOf('a'.repeat(161), 4)).toBe(8);
    expect(smsRateCentsOf({ smsRateCents: 3 })).toBe(3);
    expect(smsRateCentsOf({})).toBe(DEFAULT_SMS_RATE_CENTS);
    expect(smsRateCentsOf({ smsRateCents: -1 })).toBe(DEFAULT_SMS_RATE_CENTS);
  });
});

describe('charging', () => {
  it("is the send transaction's conditional update of the organization row: status, limit and the added cost", () => {
    // Prepare: the organization read a limit of 10 cents; the text costs 2
    const snapshot = { spendingLimitCents: 10 };
    // Act
    const item = chargeUpdate(tenantId, 2, snapshot);
    // Assess: the whole item, so a lost guard or a lost ALL_OLD fails here
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: tenantRowKey,
        UpdateExpression: 'ADD #spend :cost',
        ConditionExpression: 'attribute_exists(pk) AND #billingStatus = :active AND #limit = :limit AND (attribute_not_exists(#spend) OR #spend <= :maxSpendBefore)',
        ExpressionAttributeNames: { '#spend': 'spendCents', '#limit': 'spendingLimitCents', '#billingStatus': 'billingStatus' },
        ExpressionAttributeValues: { ':cost': 2, ':active': 'active', ':limit': 10, ':maxSpendBefore': 8 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('leaves out the never-charged branch when the cost alone is over the limit, so a row without spend cannot take it', () => {
    // Act
    const item = chargeUpdate(tenantId, 12, { spendingLimitCents: 10 }).Update!;
    // Assess: only the spend comparison (a missing spend fails it), with a bound below zero
    expect(item.ConditionExpression).toBe('attribute_exists(pk) AND #billingStatus = :active AND #limit = :limit AND (#spend <= :maxSpendBefore)');
    expect(item.ExpressionAttributeValues).toMatchObject({ ':maxSpendBefore': -2 });
  });

  it('has no spend bound when the organization has no limit, but still requires the limit to be absent', () => {
    // Act
    const item = chargeUpdate(tenantId, 1, { spendingLimitCents: null }).Update!;
    // Assess: a limit the operator set after the read refuses the charge (then read as limitChanged)
    expect(item.ConditionExpression).toBe('attribute_exists(pk) AND #billingStatus = :active AND (attribute_not_exists(#limit) OR attribute_type(#limit, :nullType))');
    expect(item.ExpressionAttributeValues).toEqual({ ':cost': 1, ':active': 'active', ':nullType': 'NULL' });
  });
});

describe('reading a refused charge from the row DynamoDB returned', () => {
  it.each([
    ['billing not active', { billingStatus: 'suspended', spendingLimitCents: null, spendCents: 0 }, { spendingLimitCents: null }, BillingBlockedError],
    ['billing not active, even when the limit also changed', { billingStatus: 'suspended', spendingLimitCents: 50 }, { spendingLimitCents: 10 }, BillingBlockedError],
    ['the limit read, reached', { billingStatus: 'active', spendingLimitCents: 5, spendCents: 5 }, { spendingLimitCents: 5 }, SpendingLimitReachedError],
  ])('%s -> %p', (_name, oldRow, snapshot, expected) => {
    // Act
    const refusal = chargeRefusal(oldRow, snapshot);
    // Assess
    expect(refusal).toBeInstanceOf(expected);
  });

  it.each([
    ['raised', { spendingLimitCents: 20 }, 5, 20],
    ['removed', { spendingLimitCents: null }, 5, null],
    ['set where there was none', { spendingLimitCents: 7 }, null, 7],
  ])('tells a limit the operator %s since the read: charge again against the new one', (_name, row, readLimit, newLimit) => {
    // Act
    const refusal = chargeRefusal({ billingStatus: 'active', spendCents: 5, ...row }, { spendingLimitCents: readLimit });
    // Assess
    expect(refusal).toEqual({ limitChanged: { spendingLimitCents: newLimit } });
  });

  it('is an error when the organization row is gone', () => {
    // Act
    const refusal = chargeRefusal(undefined, { spendingLimitCents: 5 });
    // Assess
    expect(refusal).toEqual(new Error('charge: the organization row is missing'));
  });
});

describe('refunding', () => {
  it('gives the cost back with an atomic ADD of its negative, for the transaction that fails the text', () => {
    // Act
    const item = refundUpdate(tenantId, 3);
    // Assess: no condition on spend, so a refund never fails because of a limit
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: tenantRowKey,
        UpdateExpression: 'ADD #spend :refund',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#spend': 'spendCents' },
        ExpressionAttributeValues: { ':refund': -3 },
      },
    });
  });
});
