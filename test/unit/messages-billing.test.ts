import { costCentsOf, segmentsOf, smsRateCentsOf } from '../../lambdas/contexts/texting/billing';
import { chargeShard, refundShard } from '../../lambdas/contexts/texting/spend';
import { planSettlement, splitEvenly, SPEND_SHARDS, type SpendShard } from '../../lambdas/contexts/texting/spend-plan';

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
    for (const rate of [undefined, -1, 0, 1.5, 101])
      expect(() => smsRateCentsOf({ id: 't1', smsRateCents: rate })).toThrow('holds no valid smsRateCents');
  });
});

describe('charging a spend shard', () => {
  const limited = { billingStatus: 'active' as const, spendingLimitCents: 10, version: 4 };

  it("is the send transaction's conditional update of one shard: limit version, not owing, headroom", () => {
    // Act
    const item = chargeShard(tenantId, 7, 2, limited);
    // Assess: the whole item, so a lost guard or a lost ALL_OLD fails here
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: { pk: `T#${tenantId}#SPEND#7`, sk: 'SPEND' },
        UpdateExpression: 'ADD #spendCents :add_spendCents, #headroomCents :add_headroomCents',
        ConditionExpression:
          'attribute_exists(pk) AND #limitVersion = :version AND #owing = :false AND #headroomCents >= :cost',
        ExpressionAttributeNames: {
          '#spendCents': 'spendCents',
          '#limitVersion': 'limitVersion',
          '#owing': 'owing',
          '#headroomCents': 'headroomCents',
        },
        ExpressionAttributeValues: {
          ':add_spendCents': 2,
          ':add_headroomCents': -2,
          ':cost': 2,
          ':version': 4,
          ':false': false,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('has no headroom guard when the organization has no limit, but still its version and debt', () => {
    // Act
    const item = chargeShard(tenantId, 0, 1, { ...limited, spendingLimitCents: null }).Update!;
    // Assess
    expect(item.UpdateExpression).toBe('ADD #spendCents :add_spendCents');
    expect(item.ConditionExpression).toBe('attribute_exists(pk) AND #limitVersion = :version AND #owing = :false');
    // DynamoDB refuses a value the expressions do not use: no cost without the headroom guard
    expect(item.ExpressionAttributeValues).toEqual({ ':add_spendCents': 1, ':version': 4, ':false': false });
  });

  it('gives a refund back to the shard charged: spend down, headroom up (paying a debt first), never refused for a limit', () => {
    // Act
    const item = refundShard(tenantId, 7, 3);
    // Assess
    expect(item).toEqual({
      Update: {
        TableName: process.env.TABLE_NAME,
        Key: { pk: `T#${tenantId}#SPEND#7`, sk: 'SPEND' },
        UpdateExpression: 'ADD #spendCents :add_spendCents, #headroomCents :add_headroomCents',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#spendCents': 'spendCents', '#headroomCents': 'headroomCents' },
        ExpressionAttributeValues: { ':add_spendCents': -3, ':add_headroomCents': 3 },
      },
    });
  });
});

describe('settling the spend shards', () => {
  const policy = (spendingLimitCents: number | null, version = 1) => ({
    billingStatus: 'active' as const,
    spendingLimitCents,
    version,
  });
  const shard = (
    n: number,
    spendCents: number,
    headroomCents: number,
    limitVersion = 1,
    owing = false,
  ): SpendShard => ({ shard: n, spendCents, headroomCents, limitVersion, owing });
  /** Shards after the plan: the ones it writes, the others as they were. */
  const after = (shards: (SpendShard | undefined)[], writes: ReturnType<typeof planSettlement>) =>
    shards.map((s, i) => writes.find((w) => w.to.shard === i)?.to ?? s);
  const spread = (perShard: (n: number) => [number, number], version = 1, owing = false) =>
    Array.from({ length: SPEND_SHARDS }, (_, n) => shard(n, ...perShard(n), version, owing));
  const total = (shards: (SpendShard | undefined)[], field: 'spendCents' | 'headroomCents') =>
    shards.reduce((sum, s) => sum + (s ? s[field] : 0), 0);

  it('creates missing shards with the limit split over all of them, far from the limit', () => {
    // Act
    const writes = planSettlement(policy(1_000, 0), Array(SPEND_SHARDS).fill(undefined), 1, 0);
    // Assess
    expect(writes).toHaveLength(SPEND_SHARDS);
    expect(
      writes.every((w) => w.from === undefined && w.to.spendCents === 0 && !w.to.owing && w.to.limitVersion === 0),
    ).toBe(true);
    expect(writes.map((w) => w.to.headroomCents)).toEqual(splitEvenly(1_000, SPEND_SHARDS));
  });

  it('writes nothing when the shards already follow the limit and a shard can pay', () => {
    // Prepare: 100 cents of limit, 40 spent on shard 3, headroom on shard 5
    const shards = spread((n) => [n === 3 ? 40 : 0, n === 5 ? 60 : 0]);
    // Act + Assess
    expect(planSettlement(policy(100), shards, 10, 0)).toEqual([]);
  });

  it('keeps spend + headroom equal to a lowered limit below the spend: every shard owes, none can charge', () => {
    // Prepare: limit 3, 3 spent over three shards, then the limit lowered to 1 (version 2)
    const shards = spread((n) => [n < 3 ? 1 : 0, 0]);
    // Act
    const settled = after(shards, planSettlement(policy(1, 2), shards, 1, 7));
    // Assess
    expect(total(settled, 'spendCents') + total(settled, 'headroomCents')).toBe(1);
    expect(settled.every((s) => s!.owing && s!.headroomCents <= 0 && s!.limitVersion === 2)).toBe(true);
    expect(total(settled, 'spendCents')).toBe(3);
  });

  it('stays owing while refunds have not paid the debt, and settles out of it once they have', () => {
    // Prepare: limit 1, spend 3 -> debt 2 owed; then refunds of 1 cent each on shards 0 and 1
    const owing = after(
      spread((n) => [n < 3 ? 1 : 0, 0]),
      planSettlement(
        policy(1, 2),
        spread((n) => [n < 3 ? 1 : 0, 0]),
        1,
        0,
      ),
    );
    const refundOnce = owing.map((s) =>
      s!.shard === 0 ? { ...s!, spendCents: s!.spendCents - 1, headroomCents: s!.headroomCents + 1 } : s,
    );
    const refundTwice = refundOnce.map((s) =>
      s!.shard === 1 ? { ...s!, spendCents: s!.spendCents - 1, headroomCents: s!.headroomCents + 1 } : s,
    );
    // Act + Assess: a debt of 1 is still owed after one refund (shard 0 may be above 0: the flag stops it)
    expect(total(refundOnce, 'headroomCents')).toBe(-1);
    expect(planSettlement(policy(1, 2), refundOnce, 1, 0)).toEqual([]);
    // Paid: 1 spent, limit 1 -> headroom 0, no longer owing (a 1-cent text is refused by the sum, not the flag)
    const settled = after(refundTwice, planSettlement(policy(1, 2), refundTwice, 1, 0));
    expect(settled.every((s) => !s!.owing)).toBe(true);
    expect(total(settled, 'headroomCents')).toBe(0);
  });

  it('gathers headroom scattered in parts smaller than a text onto shards that can each pay it', () => {
    // Prepare: 20 cents of headroom, 1 on each of 20 shards; a text of 4 cents
    const shards = spread((n) => [0, n < 20 ? 1 : 0]);
    // Act
    const settled = after(shards, planSettlement(policy(20), shards, 4, 30));
    // Assess: 5 shards of 4, starting at the offset; the total unchanged
    expect(settled.filter((s) => s!.headroomCents > 0).map((s) => [s!.shard, s!.headroomCents])).toEqual([
      [0, 4],
      [1, 4],
      [2, 4],
      [30, 4],
      [31, 4],
    ]);
    expect(total(settled, 'headroomCents')).toBe(20);
  });

  it('spreads headroom over every shard again when a raised limit leaves room for a text on each', () => {
    // Prepare: gathered on shard 9 near the old limit (version 1), then the limit raised (version 2)
    const shards = spread((n) => [n === 0 ? 95 : 0, n === 9 ? 5 : 0]);
    // Act
    const settled = after(shards, planSettlement(policy(1_095, 2), shards, 1, 0));
    // Assess
    expect(settled.every((s) => s!.headroomCents >= 31 && s!.limitVersion === 2)).toBe(true);
    expect(total(settled, 'headroomCents')).toBe(1_000);
  });

  it('settles again a layout whose spend and headroom do not add up to the limit, rather than trust it', () => {
    // Prepare: every shard at the version, but 1 cent of headroom too many
    const shards = spread((n) => [0, n === 0 ? 11 : 0]);
    // Act
    const settled = after(shards, planSettlement(policy(10), shards, 1, 0));
    // Assess
    expect(total(settled, 'headroomCents')).toBe(10);
  });

  it('keeps no headroom and no debt without a limit', () => {
    // Prepare: owing shards from a limit since removed
    const shards = spread(() => [2, -1], 1, true);
    // Act
    const settled = after(shards, planSettlement(policy(null, 2), shards, 1, 0));
    // Assess
    expect(settled.every((s) => !s!.owing && s!.headroomCents === 0 && s!.spendCents === 2)).toBe(true);
  });

  it('leaves a text that fits in the headroom under the limit chargeable: one shard holds it all', () => {
    // Prepare: 10 cents of limit, 5 spent, nothing created at the new version yet
    const below = spread((n) => [n === 0 ? 5 : 0, 0], 0);
    const exact = spread(() => [0, 0], 0);
    // Act: a text dearer than the headroom left; a text costing exactly the limit
    const keptBelow = after(below, planSettlement(policy(10), below, 10, 0));
    const keptExact = after(exact, planSettlement(policy(10), exact, 10, 4));
    // Assess: the 5 cents left are kept (spend + headroom is the limit), and the 10-cent text fits on shard 4
    expect(total(keptBelow, 'headroomCents')).toBe(5);
    expect(keptExact.filter((s) => s!.headroomCents > 0).map((s) => [s!.shard, s!.headroomCents])).toEqual([[4, 10]]);
  });

  it('writes only the shards that change: a missing one is created, the others left as they are', () => {
    // Prepare: 2 cents of headroom on each of 31 shards, shard 31 never created
    const shards: (SpendShard | undefined)[] = spread(() => [0, 2]);
    shards[31] = undefined;
    // Act
    const writes = planSettlement(policy(64), shards, 1, 0);
    // Assess
    expect(writes).toEqual([{ from: undefined, to: shard(31, 0, 2) }]);
  });

  it('moves every shard to a new limit version even when its amounts already fit the new limit', () => {
    // Prepare: the layout of a limit of 64, then the same limit written again (version 2)
    const shards = spread(() => [0, 2]);
    // Act
    const writes = planSettlement(policy(64, 2), shards, 1, 0);
    // Assess
    expect(writes.map((w) => w.to)).toEqual(spread(() => [0, 2], 2));
  });

  it('marks owing a shard of an organization in debt that is not, so no shard can charge', () => {
    // Prepare: limit 1, 3 spent (a debt of 2), but shard 5 not marked owing
    const shards = spread((n) => [n < 3 ? 1 : 0, n === 0 ? -2 : 0], 1, true).map((s) =>
      s.shard === 5 ? { ...s, owing: false } : s,
    );
    // Act
    const writes = planSettlement(policy(1), shards, 1, 0);
    // Assess
    expect(after(shards, writes).every((s) => s!.owing)).toBe(true);
  });

  it('clears an owing mark left on a shard once the debt is paid', () => {
    // Prepare: headroom 40 on shard 0, but shard 6 still marked owing
    const shards = spread((n) => [0, n === 0 ? 40 : 0]).map((s) => (s.shard === 6 ? { ...s, owing: true } : s));
    // Act
    const settled = after(shards, planSettlement(policy(40), shards, 1, 0));
    // Assess
    expect(settled.every((s) => !s!.owing)).toBe(true);
  });

  it('gathers scattered headroom that adds up to exactly one text onto one shard', () => {
    // Prepare: 4 cents of headroom, 1 on each of shards 0 to 3; a text of 4 cents
    const shards = spread((n) => [0, n < 4 ? 1 : 0]);
    // Act
    const settled = after(shards, planSettlement(policy(4), shards, 4, 9));
    // Assess
    expect(settled.filter((s) => s!.headroomCents > 0).map((s) => [s!.shard, s!.headroomCents])).toEqual([[9, 4]]);
  });

  it('writes nothing where no text could be charged anyway, or a shard can pay exactly one', () => {
    // Prepare: 3 cents of headroom on shard 5 for a text of 5 cents; 5 cents on shard 7 for a text of 5
    const tooLittle = spread((n) => [n === 0 ? 7 : 0, n === 5 ? 3 : 0]);
    const exactlyOne = spread((n) => [0, n === 7 ? 5 : 0]);
    // Act + Assess
    expect(planSettlement(policy(10), tooLittle, 5, 0)).toEqual([]);
    expect(planSettlement(policy(5), exactlyOne, 5, 0)).toEqual([]);
  });

  it('without a limit, writes only to clear an owing mark: headroom is never checked, so never rewritten', () => {
    // Prepare: no limit (version 2); headroom left on shard 3; then shard 8 also still owing
    const leftover = spread((n) => [1, n === 3 ? 5 : 0], 2);
    const stillOwing = leftover.map((s) => (s.shard === 8 ? { ...s, owing: true } : s));
    // Act
    const writes = planSettlement(policy(null, 2), stillOwing, 1, 0);
    // Assess
    expect(planSettlement(policy(null, 2), leftover, 1, 0)).toEqual([]);
    expect(after(stillOwing, writes).every((s) => !s!.owing)).toBe(true);
  });

  it.each([
    [10, 4, [3, 3, 2, 2]],
    [-10, 4, [-3, -3, -2, -2]],
    [0, 2, [0, 0]],
  ])('splits %p into %p near-equal whole parts: %p', (amount, parts, expected) => {
    // Act + Assess
    expect(splitEvenly(amount, parts)).toEqual(expected);
  });
});
