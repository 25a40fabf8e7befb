import { TABLE_NAME } from '../../shared/aws';
import { batchGetItems } from '../../shared/table/batch-get';
import { CONDITION, num, transactWrite, type Item, type TransactItem } from '../../shared/table/dynamo';
import { isContention } from '../../shared/table/contention';
import { ownPartitionKey } from '../../shared/table/keys';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import {
  claimSpendSettlement,
  endSpendSettlement,
  readBillingPolicy,
  type BillingPolicy,
} from '../tenants/billing-policy';
import { BillingBlockedError, SpendingLimitReachedError } from './errors';
import { planSettlement, SPEND_SHARDS, type SpendShard } from './spend-plan';

/**
 * An organization's spend, kept off its organization row: every text is charged, so one counter
 * item would take a write from every send, more than DynamoDB gives one item and a transaction
 * conflict between any two concurrent sends. The spend is split over `SPEND_SHARDS` shard rows,
 * each its own partition key (`T#<org>#SPEND#<n>`), each holding `spendCents` and `headroomCents`,
 * what it may still charge. Over the shards, spend + headroom = the limit, always: the limit is
 * exact. Two calls make up the whole policy:
 *
 * - `chargeWithin` charges a text inside the caller's transaction: one shard, `ADD spend +cost,
 *   headroom -cost` only while `headroom >= cost`, the shard is not `owing` and its `limitVersion`
 *   is the organization's as the send read it. On a refusal it decides: another shard that can pay,
 *   402, or a settlement first.
 * - `settleSpend` brings every shard to the organization's current limit in one transaction, by one
 * writer at a time (a lease on the organization row, which sends read anyway): headroom split again from the limit and
 * the spend, over as many
 *   shards as can each pay the text at hand (all 32 far from the limit, fewer near it: headroom
 *   gathers where a text can use it and spreads again when there is room). A limit below the spend
 *   leaves every shard `owing` with headroom <= 0: nothing is charged until refunds (which add to
 *   their shard's headroom, paying the debt first) bring the organization's total headroom back to
 *   the cost of a text, and a refused send then settles again. Others wait for the writer, briefly.
 *
 * Why this is exact: every shard carries the same `limitVersion` and `owing` (only a settlement
 * writes them, for all shards in one transaction), and outside `owing` no shard's headroom is
 * negative (charges are conditional, refunds only add), so a shard with `headroom >= cost` proves
 * the organization's total headroom is at least the cost. A billing block is read from the
 * organization row by every send (strongly consistent): it needs no shard write at all.
 */
export { SPEND_SHARDS };

export const spendShardKey = (tenantId: string, shard: number) =>
  ownPartitionKey(tenantId, 'spendShard', String(shard));

export const shardFromItem = (item: Item): SpendShard => ({
  shard: num(item.shard) ?? 0,
  spendCents: num(item.spendCents) ?? 0,
  headroomCents: num(item.headroomCents) ?? 0,
  limitVersion: num(item.limitVersion) ?? 0,
  owing: item.owing === true,
});

/**
 * Which shard a send charges first: the next one in turn from a random start per process, so the
 * sends of one function instance never pile onto a shard and those of many instances spread at
 * random.
 */
let nextShard = Math.floor(Math.random() * SPEND_SHARDS);
const pickShard = (): number => {
  nextShard = (nextShard + 1) % SPEND_SHARDS;
  return nextShard;
};

/** The charge's share of a send transaction; refused with the shard's old row (see the module comment). */
export function chargeShard(
  tenantId: string,
  shard: number,
  costCents: number,
  policy: Pick<BillingPolicy, 'spendingLimitCents' | 'version'>,
): TransactItem {
  const limited = policy.spendingLimitCents !== null;
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: spendShardKey(tenantId, shard),
      UpdateExpression: limited ? 'ADD #spend :cost, #headroom :minusCost' : 'ADD #spend :cost',
      ConditionExpression:
        `${CONDITION.rowExists} AND #version = :version AND #owing = :false` +
        (limited ? ' AND #headroom >= :cost' : ''),
      ExpressionAttributeNames: {
        '#spend': 'spendCents',
        '#version': 'limitVersion',
        '#owing': 'owing',
        ...(limited && { '#headroom': 'headroomCents' }),
      },
      ExpressionAttributeValues: {
        ':cost': costCents,
        ':version': policy.version,
        ':false': false,
        ...(limited && { ':minusCost': -costCents }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Gives a failed text's charge back to the shard it was taken from, in the transaction that fails
 * it. Spend + headroom over the shards is unchanged; an owing shard's debt is paid first.
 */
export function refundShard(tenantId: string, shard: number, costCents: number): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: spendShardKey(tenantId, shard),
      UpdateExpression: 'ADD #spend :minusCost, #headroom :cost',
      ConditionExpression: CONDITION.rowExists,
      ExpressionAttributeNames: { '#spend': 'spendCents', '#headroom': 'headroomCents' },
      ExpressionAttributeValues: { ':cost': costCents, ':minusCost': -costCents },
    },
  };
}

/** Every shard of the organization, in shard order, strongly consistent; `undefined` where one does not exist yet. */
export async function readShards(tenantId: string): Promise<(SpendShard | undefined)[]> {
  const keys = Array.from({ length: SPEND_SHARDS }, (_, shard) => spendShardKey(tenantId, shard));
  const items = await batchGetItems(keys, { consistentRead: true });
  const byShard = new Map(items.map((item) => [num(item.shard), shardFromItem(item)]));
  return keys.map((_, shard) => byShard.get(shard));
}

/**
 * What the organization has been charged (charges minus refunds). For the operator and the tests; never on a send's
 * path.
 */
export async function spendOf(tenantId: string): Promise<number> {
  return (await readShards(tenantId)).reduce((sum, shard) => sum + (shard?.spendCents ?? 0), 0);
}

// ---------- charging ----------

/** A charge offered to the caller's transaction. */
export type Charge = { item: TransactItem; shard: number };

/**
 * What the caller's transaction did with the charge: committed (`charged`, the caller's result),
 * refused by the charge's own condition (`chargeRefused`, the shard's old row, absent when the
 * shard does not exist), or lost a race of the caller's own rows (`LOST_RACE`: the same charge is
 * offered again). Any other outcome the caller throws.
 */
export type ChargeAttempt<T> = { charged: T } | { chargeRefused: Item | undefined } | typeof LOST_RACE;

/**
 * Rounds of offering a charge: each refused round either moves to a shard that can pay, waits for
 * a settlement, or ends in a 402; near the limit, concurrent sends race for the last headroom.
 */
const CHARGE_ROUNDS = { what: 'charge a text to the spend shards', rounds: 16 };

/**
 * Charges `costCents` to the organization within the caller's transaction (`attempt`), under
 * `policy` as the send read it (strongly consistent) from the organization row. Throws 402
 * (`BillingBlockedError`, `SpendingLimitReachedError`) when the organization may not spend it.
 */
export async function chargeWithin<T>(
  tenantId: string,
  policy: BillingPolicy,
  costCents: number,
  attempt: (charge: Charge) => Promise<ChargeAttempt<T>>,
): Promise<T> {
  let current = policy;
  let shard = pickShard();
  return optimisticRounds(CHARGE_ROUNDS, async (): Promise<RoundResult<T>> => {
    if (current.billingStatus !== 'active') throw new BillingBlockedError();
    // A writer is rewriting the shards: charging one now would only collide with it.
    if (isSettling(current)) current = await waitForSettlement(tenantId);
    const outcome = await attempt({ item: chargeShard(tenantId, shard, costCents, current), shard });
    if (outcome === LOST_RACE) return LOST_RACE;
    if ('charged' in outcome) return outcome.charged;
    ({ policy: current, shard } = await nextAfterRefusal(tenantId, current, shard, costCents, outcome.chargeRefused));
    return LOST_RACE;
  });
}

/** After a shard refused the charge: the policy and shard of the next round, or the 402. */
async function nextAfterRefusal(
  tenantId: string,
  policy: BillingPolicy,
  shard: number,
  costCents: number,
  oldRow: Item | undefined,
): Promise<{ policy: BillingPolicy; shard: number }> {
  const refused = oldRow ? shardFromItem(oldRow) : undefined;
  // The shards follow a newer limit than the send read: read the organization row again.
  if (refused && refused.limitVersion > policy.version) return { policy: await readBillingPolicy(tenantId), shard };
  if (refused && refused.limitVersion === policy.version) {
    const shards = await readShards(tenantId);
    if (shards.every((s): s is SpendShard => s !== undefined && s.limitVersion === policy.version)) {
      const total = shards.reduce((sum, s) => sum + s.headroomCents, 0);
      if (policy.spendingLimitCents !== null && total < costCents) throw new SpendingLimitReachedError();
      const able = ableToPay(shards, costCents);
      if (able !== undefined) return { policy, shard: able };
    }
  }
  // Behind the organization's limit, not made yet, or headroom where no text can use it (or an
  // owing organization whose refunds paid its debt): one writer settles, the others wait for it.
  const settled = await settleSpend(tenantId, { costCents });
  const [fresh, layout] = await Promise.all([
    readBillingPolicy(tenantId),
    settled ? Promise.resolve(settled) : readShards(tenantId),
  ]);
  return { policy: fresh, shard: ableToPay(layout, costCents) ?? pickShard() };
}

/**
 * A shard that can pay `costCents`, at random, each as likely as the headroom it holds, so
 * concurrent sends near the limit spread over them; undefined when none can.
 */
function ableToPay(shards: readonly (SpendShard | undefined)[], costCents: number): number | undefined {
  const able = shards.filter((s): s is SpendShard => s !== undefined && !s.owing && s.headroomCents >= costCents);
  if (able.length === 0) return undefined;
  let ticket = Math.random() * able.reduce((sum, s) => sum + s.headroomCents, 0);
  for (const shard of able) {
    ticket -= shard.headroomCents;
    if (ticket < 0) return shard.shard;
  }
  return able[able.length - 1].shard;
}

// ---------- settling ----------

/** How long a settling writer may hold the lease: far longer than a settlement takes (a read and one transaction). */
const LEASE_MS = 3_000;
/** How often a send waiting for a settlement reads the organization row again (on average). */
const LEASE_POLL_MS = 40;

/** Rounds of a settlement whose shards changed between its read and its write (a charge, a refund). */
const SETTLE_ROUNDS = { what: 'settle the spend shards', rounds: 8 };

const isSettling = (policy: BillingPolicy, now = Date.now()) =>
  policy.settlingUntil !== null && policy.settlingUntil >= now;

/**
 * Brings every shard to the organization's current limit (creating the shards it is missing) and
 * spreads the headroom so that each shard holding some can pay `costCents` (default: a 1-cent text,
 * which spreads it over all shards). One writer at a time, under a lease on the organization row
 * (tenants/billing-policy.ts), which every send reads anyway: sends that see it wait rather than
 * charge shards being rewritten, and a caller that finds another writer settling waits until it is
 * done instead of writing the same shards. Called by the operator's `tenant create` and
 * `tenant update`, and by a send whose charge found the shards behind the organization row or its
 * headroom out of reach. Returns the shards as this writer left them, or undefined when it waited
 * for another writer instead.
 */
export async function settleSpend(
  tenantId: string,
  { costCents = 1 }: { costCents?: number } = {},
): Promise<(SpendShard | undefined)[] | undefined> {
  const holder = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  if (!(await claimSpendSettlement(tenantId, holder, Date.now() + LEASE_MS))) {
    await waitForSettlement(tenantId);
    return undefined;
  }
  try {
    return await optimisticRounds(SETTLE_ROUNDS, async () => {
      const [policy, shards] = await Promise.all([readBillingPolicy(tenantId), readShards(tenantId)]);
      const writes = planSettlement(policy, shards, costCents, Math.floor(Math.random() * SPEND_SHARDS));
      if (writes.length === 0) return shards;
      try {
        const reasons = await transactWrite(writes.map((write) => settlementWrite(tenantId, write.from, write.to)));
        return reasons
          ? LOST_RACE
          : shards.map((shard, i) => writes.find((write) => write.to.shard === i)?.to ?? shard);
      } catch (err) {
        // A send that read the organization row before the lease was taken still charging a shard:
        // it is done in a moment, and this writer is the only one that may settle, so it goes again.
        if (isContention(err)) return LOST_RACE;
        throw err;
      }
    });
  } finally {
    await endSpendSettlement(tenantId, holder);
  }
}

/** One shard's settlement write, guarded on the shard being exactly as read (absent: created). */
function settlementWrite(tenantId: string, from: SpendShard | undefined, to: SpendShard): TransactItem {
  if (!from) {
    return {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...spendShardKey(tenantId, to.shard), type: 'spendShard', tenantId, ...to },
        ConditionExpression: CONDITION.rowIsNew,
      },
    };
  }
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: spendShardKey(tenantId, to.shard),
      UpdateExpression: 'SET #headroom = :headroom, #version = :version, #owing = :owing',
      ConditionExpression:
        '#spend = :spend AND #headroom = :wasHeadroom AND #version = :wasVersion AND #owing = :wasOwing',
      ExpressionAttributeNames: {
        '#spend': 'spendCents',
        '#headroom': 'headroomCents',
        '#version': 'limitVersion',
        '#owing': 'owing',
      },
      ExpressionAttributeValues: {
        ':headroom': to.headroomCents,
        ':version': to.limitVersion,
        ':owing': to.owing,
        ':spend': from.spendCents,
        ':wasHeadroom': from.headroomCents,
        ':wasVersion': from.limitVersion,
        ':wasOwing': from.owing,
      },
    },
  };
}

/**
 * Waits until no writer holds the settlement lease (released, or run out after a crash); the policy as it then stands.
 */
async function waitForSettlement(tenantId: string): Promise<BillingPolicy> {
  const deadline = Date.now() + LEASE_MS;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS / 2 + Math.random() * LEASE_POLL_MS));
    const policy = await readBillingPolicy(tenantId);
    if (!isSettling(policy) || Date.now() > deadline) return policy;
  }
}
