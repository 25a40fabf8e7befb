import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { TemporarilyUnavailableError } from '../../lambdas/shared/errors';
import type { Item } from '../../lambdas/shared/table/dynamo';
import { LOST_RACE } from '../../lambdas/shared/table/optimistic-rounds';
import { tenantKey } from '../../lambdas/contexts/tenants/tenants';
import { BillingBlockedError, SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';
import {
  chargeShard,
  chargeWithin,
  readShards,
  settleSpend,
  spendFor,
  spendOf,
  spendShardKey,
  type Charge,
  type ChargeAttempt,
} from '../../lambdas/contexts/texting/spend';
import type { PolicyAsRead } from '../../lambdas/contexts/texting/spend-lease';
import { SPEND_SHARDS, type SpendShard } from '../../lambdas/contexts/texting/spend-plan';

/**
 * An organization's spend (texting/spend.ts) against aws-sdk-client-mock: the commands a charge and a settlement
 * send, and their answers to what DynamoDB answers (a refused charge, a lease another writer holds, a cancelled
 * settlement, contention). The same paths on the engine are integration/spend-changes.test.ts's and
 * integration/spend-lease.test.ts's.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const TENANT = '0199a000-0000-7000-8000-000000000001';

/** The organization row as the table holds it: the billing policy and, while a writer settles, its lease. */
const orgRow = (over: Item = {}): Item => ({
  ...tenantKey(TENANT),
  billingStatus: 'active',
  spendingLimitCents: 64,
  limitVersion: 2,
  ...over,
});
const shardRow = (shard: number, spendCents: number, headroomCents: number, limitVersion = 2, owing = false) => ({
  ...spendShardKey(TENANT, shard),
  type: 'spendShard',
  shard,
  spendCents,
  headroomCents,
  limitVersion,
  owing,
});
/** Every shard at `version`, with the headroom `headroomOf` gives it and no spend. */
const layout = (headroomOf: (shard: number) => number, version = 2) =>
  Array.from({ length: SPEND_SHARDS }, (_, n) => shardRow(n, 0, headroomOf(n), version));
const policy = (over: Partial<PolicyAsRead> = {}): PolicyAsRead => ({
  billingStatus: 'active',
  spendingLimitCents: 64,
  version: 2,
  ...over,
});
const lease = { holder: 'me', untilMs: Date.now() + 3_000, fence: 5 };

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const cancelled = (reasons: { Code: string; Item?: Item }[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
  });

/** Serves the organization row and the shards from what the test sets, as they stand at each read. */
function serve(table: { org: () => Item; shards: () => Item[] }) {
  ddb.on(GetCommand).callsFake(() => ({ Item: table.org() }));
  ddb.on(BatchGetCommand).callsFake(() => ({ Responses: { [TABLE_NAME]: table.shards() } }));
}
/** Lease claims answer `fence` (or the claim is refused when `held`); releases succeed. */
function leaseAnswers(claims: ({ fence: number } | 'held')[]) {
  let next = 0;
  ddb.on(UpdateCommand).callsFake((input: { ReturnValues?: string }) => {
    if (input.ReturnValues !== 'UPDATED_NEW') return {};
    const answer = claims[Math.min(next++, claims.length - 1)];
    if (answer === 'held') throw conditionFailed();
    return { Attributes: { spendSettlementFence: answer.fence } };
  });
}
const callsOf = (command: unknown) => ddb.commandCalls(command as typeof GetCommand);
/** The caller's transaction: answers each charge offered in turn with the next of `answers`, and keeps the charges. */
function caller<T>(answers: ChargeAttempt<T>[]) {
  const charges: Charge[] = [];
  const attempt = jest.fn(async (charge: Charge) => {
    charges.push(charge);
    return answers[Math.min(charges.length - 1, answers.length - 1)];
  });
  return { charges, attempt };
}
const versionOf = (charge: Charge) => charge.item.Update!.ExpressionAttributeValues![':version'];

beforeEach(() => ddb.reset());
afterEach(() => jest.restoreAllMocks());

describe('reading the spend shards', () => {
  it('reads every shard strongly consistent, each in its place, a missing one undefined and missing amounts 0', async () => {
    // Prepare: shard 3 with only a spend, shard 0 whole
    serve({ org: orgRow, shards: () => [{ ...spendShardKey(TENANT, 3), shard: 3, spendCents: 5 }, shardRow(0, 2, 7)] });
    // Act
    const shards = await readShards(TENANT);
    // Assess
    expect(ddb).toHaveReceivedCommandWith(BatchGetCommand, {
      RequestItems: {
        [TABLE_NAME]: {
          Keys: Array.from({ length: SPEND_SHARDS }, (_, n) => spendShardKey(TENANT, n)),
          ConsistentRead: true,
        },
      },
    });
    expect(shards).toHaveLength(SPEND_SHARDS);
    expect(shards[0]).toEqual<SpendShard>({ shard: 0, spendCents: 2, headroomCents: 7, limitVersion: 2, owing: false });
    expect(shards[3]).toEqual<SpendShard>({ shard: 3, spendCents: 5, headroomCents: 0, limitVersion: 0, owing: false });
    expect(shards.filter((s) => s === undefined)).toHaveLength(SPEND_SHARDS - 2);
  });

  it('counts what the organization was charged over the shards that exist', async () => {
    // Prepare
    serve({ org: orgRow, shards: () => [shardRow(1, 4, 0), shardRow(9, 3, 0, 2, true)] });
    // Act + Assess
    await expect(spendOf(TENANT)).resolves.toBe(7);
  });
});

describe('charging a text', () => {
  it('offers the caller the charge of one shard, answers what the caller committed, and reads nothing', async () => {
    // Prepare
    const { charges, attempt } = caller([{ charged: 'stored' }]);
    // Act
    const result = await chargeWithin(TENANT, policy(), 3, attempt);
    // Assess
    expect(result).toBe('stored');
    expect(charges).toEqual([{ shard: charges[0].shard, item: chargeShard(TENANT, charges[0].shard, 3, policy()) }]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it("offers each new send the shard after the last one's, so one instance's sends do not pile onto one", async () => {
    // Prepare
    const first = caller([{ charged: 1 }]);
    const second = caller([{ charged: 2 }]);
    // Act
    await chargeWithin(TENANT, policy(), 1, first.attempt);
    await chargeWithin(TENANT, policy(), 1, second.attempt);
    // Assess
    expect((second.charges[0].shard - first.charges[0].shard + SPEND_SHARDS) % SPEND_SHARDS).toBe(1);
  });

  it('offers the same charge again when the caller lost a race of its own rows', async () => {
    // Prepare
    const { charges, attempt } = caller<string>([LOST_RACE, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy(), 2, attempt);
    // Assess
    expect(charges).toHaveLength(2);
    expect(charges[1]).toEqual(charges[0]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 402 billing_blocked, charging nothing, when the organization may not send', async () => {
    // Prepare
    const { attempt } = caller([{ charged: 'stored' }]);
    // Act + Assess
    await expect(chargeWithin(TENANT, policy({ billingStatus: 'past_due' }), 1, attempt)).rejects.toThrow(
      BillingBlockedError,
    );
    expect(attempt).not.toHaveBeenCalled();
  });

  it('waits out a settlement under way, then charges under the policy the row then holds', async () => {
    // Prepare: the send read the row while a writer held the lease; the writer then raised the limit (version 3)
    let reads = 0;
    serve({
      org: () => orgRow(++reads === 1 ? { spendSettlingUntil: Date.now() + 60_000 } : { limitVersion: 3 }),
      shards: () => [],
    });
    const { charges, attempt } = caller([{ charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy({ settlingUntil: Date.now() + 60_000 }), 1, attempt);
    // Assess
    expect(reads).toBe(2);
    expect(charges.map(versionOf)).toEqual([3]);
  });

  it('answers 402 billing_blocked when the settlement it waited for left the organization blocked', async () => {
    // Prepare
    serve({ org: () => orgRow({ billingStatus: 'suspended' }), shards: () => [] });
    const { attempt } = caller([{ charged: 'stored' }]);
    // Act + Assess
    await expect(chargeWithin(TENANT, policy({ settlingUntil: Date.now() + 60_000 }), 1, attempt)).rejects.toThrow(
      BillingBlockedError,
    );
    expect(attempt).not.toHaveBeenCalled();
  });

  it('reads the row again and charges the same shard when the shard follows a newer limit than the send read', async () => {
    // Prepare: the shard refused with limit version 3; the row holds version 3
    serve({ org: () => orgRow({ limitVersion: 3 }), shards: () => [] });
    const { charges, attempt } = caller([{ chargeRefused: shardRow(0, 0, 50, 3) }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy(), 1, attempt);
    // Assess
    expect(charges.map(versionOf)).toEqual([2, 3]);
    expect(charges[1].shard).toBe(charges[0].shard);
    expect(callsOf(BatchGetCommand)).toHaveLength(0);
  });

  it('moves to the shard that can pay when the refused one cannot, neither an owing one nor one short by a cent', async () => {
    // Prepare: every shard at the version; shard 17 holds exactly the text's 4 cents, 18 is owing, 19 holds 3; the
    // draw at the far end of the headroom, where an owing or short shard would be picked if it counted
    const shards = layout((n) => (n === 17 ? 4 : n === 19 ? 3 : 0));
    shards[18] = shardRow(18, 0, 9, 2, true);
    serve({ org: orgRow, shards: () => shards });
    jest.spyOn(Math, 'random').mockReturnValue(0.99);
    const { charges, attempt } = caller([{ chargeRefused: shardRow(0, 0, 0) }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy(), 4, attempt);
    // Assess: no settlement, no new read of the row
    expect(charges.map((c) => c.shard).slice(1)).toEqual([17]);
    expect(charges.map(versionOf)).toEqual([2, 2]);
    expect(callsOf(GetCommand)).toHaveLength(0);
    expect(callsOf(UpdateCommand)).toHaveLength(0);
  });

  it('spreads the sends over the shards that can pay, weighted by their headroom', async () => {
    // Prepare: 5 cents on shard 4 and 15 on shard 6: the first quarter of the draw picks 4, the rest 6
    serve({ org: orgRow, shards: () => layout((n) => (n === 4 ? 5 : n === 6 ? 15 : 0)) });
    const pickedAt = async (draw: number) => {
      jest.spyOn(Math, 'random').mockReturnValue(draw);
      const { charges, attempt } = caller([{ chargeRefused: shardRow(0, 0, 0) }, { charged: 'stored' }]);
      await chargeWithin(TENANT, policy(), 1, attempt);
      return charges[1].shard;
    };
    // Act + Assess
    expect([await pickedAt(0), await pickedAt(0.24), await pickedAt(0.25), await pickedAt(0.99)]).toEqual([4, 4, 6, 6]);
  });

  it('answers 402 spending_limit_reached when every shard follows the limit and all their headroom is short of the text', async () => {
    // Prepare: 3 cents over three shards, a text of 4
    serve({ org: orgRow, shards: () => layout((n) => (n < 3 ? 1 : 0)) });
    const { attempt } = caller([{ chargeRefused: shardRow(0, 0, 1) }, { charged: 'stored' }]);
    // Act + Assess
    await expect(chargeWithin(TENANT, policy(), 4, attempt)).rejects.toThrow(SpendingLimitReachedError);
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(callsOf(UpdateCommand)).toHaveLength(0);
  });

  it('charges headroom that together is exactly the text but scattered, once a settlement gathers it on one shard', async () => {
    // Prepare: 2 cents on each of shards 3 and 4, a text of 4; the settlement starts its layout at shard 16
    serve({ org: () => orgRow({ spendingLimitCents: 4 }), shards: () => layout((n) => (n === 3 || n === 4 ? 2 : 0)) });
    leaseAnswers([{ fence: 1 }]);
    ddb.on(TransactWriteCommand).resolves({});
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const { charges, attempt } = caller([{ chargeRefused: shardRow(3, 0, 2) }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy({ spendingLimitCents: 4 }), 4, attempt);
    // Assess: the 4 cents moved onto shard 16, which the charge then takes
    const written = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(written.map((item) => item.Update!.ExpressionAttributeValues![':set_headroomCents'])).toEqual([0, 0, 4]);
    expect(charges[1].shard).toBe(16);
  });

  it.each([
    ['a shard not made yet', (shards: Item[]) => shards.slice(0, -1)],
    ['a shard behind the limit', (shards: Item[]) => [...shards.slice(0, -1), shardRow(31, 0, 0, 1)]],
  ])('settles rather than answer 402 from shards that do not all follow the limit: %s', async (_case, behind) => {
    // Prepare: no headroom on the shards at the version; the limit's 64 cents not yet spread
    let shards = behind(layout(() => 0));
    serve({ org: orgRow, shards: () => shards });
    leaseAnswers([{ fence: 1 }]);
    ddb.on(TransactWriteCommand).callsFake(() => {
      shards = layout(() => 2);
      return {};
    });
    const { charges, attempt } = caller([{ chargeRefused: shardRow(0, 0, 0) }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy(), 1, attempt);
    // Assess
    expect(charges).toHaveLength(2);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('never answers 402 for headroom without a limit: a settlement that writes nothing, then any shard', async () => {
    // Prepare: no limit, every shard at the version with no headroom
    serve({ org: () => orgRow({ spendingLimitCents: undefined }), shards: () => layout(() => 0) });
    leaseAnswers([{ fence: 1 }]);
    const { charges, attempt } = caller([{ chargeRefused: shardRow(0, 0, 0) }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy({ spendingLimitCents: null }), 4, attempt);
    // Assess
    expect(charges).toHaveLength(2);
    expect(callsOf(TransactWriteCommand)).toHaveLength(0);
  });

  it.each([
    ['was never made', undefined],
    ['is behind the limit the send follows', shardRow(0, 0, 0, 1)],
  ])(
    'settles first when the refused shard %s, then charges a shard the settlement gave headroom',
    async (_case, row) => {
      // Prepare: no shard exists; the lease is free (fence 7)
      serve({ org: orgRow, shards: () => [] });
      leaseAnswers([{ fence: 7 }]);
      ddb.on(TransactWriteCommand).resolves({});
      const { charges, attempt } = caller([{ chargeRefused: row }, { charged: 'stored' }]);
      // Act
      await chargeWithin(TENANT, policy(), 1, attempt);
      // Assess: every shard created with its part of the 64 cents and the lease's fence, the lease given back
      const items = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems as unknown as {
        Put: { Item: Item };
      }[];
      expect(items).toHaveLength(SPEND_SHARDS);
      expect(items.every(({ Put }) => Put.Item.fence === 7 && Put.Item.limitVersion === 2)).toBe(true);
      expect(items.reduce((sum, { Put }) => sum + (Put.Item.headroomCents as number), 0)).toBe(64);
      expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
        UpdateExpression: 'REMOVE #spendSettlingUntil, #spendSettlingHolder',
      });
      // straight to the settlement, whose layout is the one charged: the shards are read once
      expect(callsOf(BatchGetCommand)).toHaveLength(1);
      expect(charges.map(versionOf)).toEqual([2, 2]);
    },
  );

  it('waits for the writer holding the lease rather than settle alongside it, then charges a shard it gave headroom', async () => {
    // Prepare: the lease is held; the holder is gone at the second read of the row, shard 9 then holds 64 cents
    let reads = 0;
    let shards: Item[] = [];
    serve({
      org: () => {
        reads += 1;
        if (reads === 2) shards = [shardRow(9, 0, 64)]; // a holder that stopped after its first shard
        return orgRow(reads === 1 ? { spendSettlingUntil: Date.now() + 60_000 } : {});
      },
      shards: () => shards,
    });
    leaseAnswers(['held']);
    const { charges, attempt } = caller([{ chargeRefused: undefined }, { charged: 'stored' }]);
    // Act
    await chargeWithin(TENANT, policy(), 1, attempt);
    // Assess
    expect(charges[1].shard).toBe(9);
    expect(callsOf(TransactWriteCommand)).toHaveLength(0);
  });

  it('answers 503 after 16 rounds that each lost a race', async () => {
    // Prepare
    const { attempt } = caller<string>([LOST_RACE]);
    // Act + Assess
    await expect(chargeWithin(TENANT, policy(), 1, attempt)).rejects.toThrow(TemporarilyUnavailableError);
    expect(attempt).toHaveBeenCalledTimes(16);
  });
});

describe('a settlement transaction', () => {
  const to = (shard: number, headroomCents: number, limitVersion = 3): SpendShard => ({
    shard,
    spendCents: 0,
    headroomCents,
    limitVersion,
    owing: false,
  });
  const from = (shard: number, headroomCents: number, limitVersion = 2, owing = false): SpendShard => ({
    shard,
    spendCents: 1,
    headroomCents,
    limitVersion,
    owing,
  });

  it('creates a missing shard only if still missing, and rewrites one (here: out of debt, same limit) only as read and unfenced by a later claim', async () => {
    // Prepare
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const refusal = await spendFor(TENANT).writeSettlement(lease, [
      { from: undefined, to: to(0, 10) },
      { from: from(1, 4, 3, true), to: { ...to(1, 6), spendCents: 1 } },
    ]);
    // Assess
    expect(refusal).toBeUndefined();
    expect(ddb).toHaveReceivedCommandWith(TransactWriteCommand, {
      TransactItems: [
        {
          Put: {
            TableName: TABLE_NAME,
            Item: { ...spendShardKey(TENANT, 0), type: 'spendShard', tenantId: TENANT, ...to(0, 10), fence: 5 },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Update: {
            TableName: TABLE_NAME,
            Key: spendShardKey(TENANT, 1),
            UpdateExpression:
              'SET #headroomCents = :set_headroomCents, #limitVersion = :set_limitVersion, #owing = :set_owing, #fence = :set_fence',
            ConditionExpression:
              '#spendCents = :spend AND #headroomCents = :wasHeadroom AND #limitVersion = :wasVersion AND #owing = :wasOwing' +
              ' AND (attribute_not_exists(#fence) OR #fence <= :fence)',
            ExpressionAttributeNames: {
              '#headroomCents': 'headroomCents',
              '#limitVersion': 'limitVersion',
              '#owing': 'owing',
              '#fence': 'fence',
              '#spendCents': 'spendCents',
            },
            ExpressionAttributeValues: {
              ':set_headroomCents': 6,
              ':set_limitVersion': 3,
              ':set_owing': false,
              ':set_fence': 5,
              ':spend': 1,
              ':wasHeadroom': 4,
              ':wasVersion': 3,
              ':wasOwing': true,
              ':fence': 5,
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ],
    });
  });

  it('writes nothing when there is nothing to write, or when it was planned from a limit older than a shard holds', async () => {
    // Act + Assess
    await expect(spendFor(TENANT).writeSettlement(lease, [])).resolves.toBeUndefined();
    await expect(
      spendFor(TENANT).writeSettlement(lease, [
        { from: from(0, 1, 3), to: to(0, 2, 3) },
        { from: from(1, 1, 4), to: to(1, 2, 3) },
      ]),
    ).resolves.toBe('changed');
    expect(ddb.calls()).toHaveLength(0);
  });

  const refusedBy = (fence: Item | undefined) =>
    fence ? { Code: 'ConditionalCheckFailed', Item: { ...shardRow(1, 0, 3), ...fence } } : { Code: 'None' };
  it.each([
    ['a later claim of the lease wrote the shard: the lease is lost', undefined, { fence: 6 }, 'lease lost'],
    ['a later claim wrote one of two refused shards: the lease is lost', { fence: 5 }, { fence: 6 }, 'lease lost'],
    ['this claim wrote it before: the shard changed', undefined, { fence: 5 }, 'changed'],
    ['no settler wrote it yet: the shard changed', undefined, {}, 'changed'],
  ])('reads a refused write: %s', async (_case, first, second, answer) => {
    // Prepare
    ddb.on(TransactWriteCommand).rejects(cancelled([refusedBy(first), refusedBy(second)]));
    // Act
    const refusal = await spendFor(TENANT).writeSettlement(lease, [
      { from: from(0, 1), to: to(0, 2) },
      { from: from(1, 1), to: to(1, 2) },
    ]);
    // Assess
    expect(refusal).toBe(answer);
  });

  it('goes again when a shard it meant to create was made meanwhile (its refusal carries no row)', async () => {
    // Prepare
    ddb.on(TransactWriteCommand).rejects(cancelled([{ Code: 'ConditionalCheckFailed' }]));
    // Act + Assess
    await expect(spendFor(TENANT).writeSettlement(lease, [{ from: undefined, to: to(0, 2) }])).resolves.toBe('changed');
  });

  it('goes again after contention (a send still charging a shard), and lets any other error through', async () => {
    // Prepare
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled([{ Code: 'TransactionConflict' }]))
      .rejectsOnce(Object.assign(new Error('Item size has exceeded the maximum'), { name: 'ValidationException' }));
    const writes = [{ from: from(0, 1), to: to(0, 2) }];
    // Act + Assess
    await expect(spendFor(TENANT).writeSettlement(lease, writes)).resolves.toBe('changed');
    await expect(spendFor(TENANT).writeSettlement(lease, writes)).rejects.toThrow('Item size has exceeded');
  });
});

describe('settling under the lease', () => {
  it('reads again and settles what it then read when the shards changed, and gives the lease back', async () => {
    // Prepare: the first transaction is refused (a shard changed); the shards are missing both times
    serve({ org: orgRow, shards: () => [] });
    leaseAnswers([{ fence: 1 }]);
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled([{ Code: 'ConditionalCheckFailed', Item: shardRow(0, 0, 2) }]))
      .resolves({});
    // Act
    const shards = await spendFor(TENANT).settleHolding(lease, 1);
    // Assess: the layout it wrote, every shard in its place and on the version
    expect(callsOf(TransactWriteCommand)).toHaveLength(2);
    expect(shards!.map((s) => s?.shard)).toEqual(Array.from({ length: SPEND_SHARDS }, (_, n) => n));
    expect(callsOf(BatchGetCommand)).toHaveLength(2);
    expect(shards!.every((s) => s?.limitVersion === 2)).toBe(true);
    expect(shards!.reduce((sum, s) => sum + s!.headroomCents, 0)).toBe(64);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: tenantKey(TENANT),
      ConditionExpression: '#spendSettlingHolder = :holder',
      ExpressionAttributeValues: { ':holder': 'me' },
    });
  });

  it('answers the shards as read when they need no write', async () => {
    // Prepare
    serve({ org: orgRow, shards: () => layout(() => 2) });
    leaseAnswers([{ fence: 1 }]);
    // Act
    const shards = await spendFor(TENANT).settleHolding(lease, 1);
    // Assess
    expect(shards!.map((s) => s!.headroomCents)).toEqual(Array(SPEND_SHARDS).fill(2));
    expect(callsOf(TransactWriteCommand)).toHaveLength(0);
  });

  it('stops at once when a later claim of the lease wrote a shard, and gives back what is left of its lease', async () => {
    // Prepare
    serve({ org: orgRow, shards: () => [] });
    leaseAnswers([{ fence: 1 }]);
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled([{ Code: 'ConditionalCheckFailed', Item: { ...shardRow(0, 0, 2), fence: 9 } }]));
    // Act
    const shards = await spendFor(TENANT).settleHolding(lease, 1);
    // Assess
    expect(shards).toBeUndefined();
    expect(callsOf(TransactWriteCommand)).toHaveLength(1);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { ConditionExpression: '#spendSettlingHolder = :holder' });
  });

  it('gives the lease back when the settlement fails', async () => {
    // Prepare
    serve({ org: orgRow, shards: () => [] });
    leaseAnswers([{ fence: 1 }]);
    ddb.on(TransactWriteCommand).rejects(Object.assign(new Error('boom'), { name: 'InternalServerError' }));
    // Act + Assess
    await expect(spendFor(TENANT).settleHolding(lease, 1)).rejects.toThrow('boom');
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { ConditionExpression: '#spendSettlingHolder = :holder' });
  });
});

describe("the operator's settlement", () => {
  it('claims the lease, settles, and answers the layout it wrote', async () => {
    // Prepare
    serve({ org: orgRow, shards: () => [] });
    leaseAnswers([{ fence: 3 }]);
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const shards = await settleSpend(TENANT);
    // Assess
    expect(shards.every((s) => s?.limitVersion === 2)).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: tenantKey(TENANT),
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(#spendSettlingUntil) OR #spendSettlingUntil < :now)',
    });
  });

  it('waits out another writer and answers the shards once they follow the limit the row holds', async () => {
    // Prepare: the lease is held; the holder finished by the first look
    serve({ org: orgRow, shards: () => layout(() => 2) });
    leaseAnswers(['held']);
    // Act
    const shards = await settleSpend(TENANT);
    // Assess
    expect(shards.map((s) => s?.headroomCents)).toEqual(Array(SPEND_SHARDS).fill(2));
    expect(callsOf(TransactWriteCommand)).toHaveLength(0);
  });

  it('claims again when the writer it waited out left shards behind the limit, and settles them itself', async () => {
    // Prepare: held once, then free; the row holds version 2, shard 5 was never made and shard 30 still follows 1
    let shards: Item[] = layout(() => 2)
      .filter((row) => row.shard !== 5)
      .map((row) => (row.shard === 30 ? shardRow(30, 0, 2, 1) : row));
    serve({ org: orgRow, shards: () => shards });
    leaseAnswers(['held', { fence: 4 }]);
    ddb.on(TransactWriteCommand).callsFake(() => {
      shards = layout(() => 2);
      return {};
    });
    // Act
    const settled = await settleSpend(TENANT);
    // Assess
    expect(callsOf(TransactWriteCommand)).toHaveLength(1);
    expect(settled.every((s) => s?.limitVersion === 2)).toBe(true);
  });

  it('does not answer while the writer it waited for still holds the lease, even over shards that look settled', async () => {
    // Prepare: the lease is held past the bound; the shards already follow the version
    serve({ org: () => orgRow({ spendSettlingUntil: Date.now() + 60_000 }), shards: () => layout(() => 2) });
    leaseAnswers(['held']);
    // Act + Assess
    await expect(settleSpend(TENANT, { boundMs: 100 })).rejects.toThrow(
      `The spend shards of organization ${TENANT} did not reach its current limit within 100 ms`,
    );
  });

  it('gives up loudly past its bound, saying the row holds the change and the command may run again', async () => {
    // Act + Assess
    await expect(settleSpend(TENANT, { boundMs: -1 })).rejects.toThrow(
      'the organization row holds the change; run the command again',
    );
    expect(ddb.calls()).toHaveLength(0);
  });
});
