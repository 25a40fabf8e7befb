import { TABLE_NAME } from '../../shared/aws';
import { batchGetItems } from '../../shared/table/batch-get';
import { CONDITION, num, type Item, type TransactItem } from '../../shared/table/dynamo';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { isContention } from '../../shared/table/contention';
import { ownPartitionKey } from '../../shared/table/keys';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { updateExpression, type Condition } from '../../shared/table/update-expression';
import type { BillingPolicy } from '../tenants/billing-policy';
import { BillingBlockedError, SpendingLimitReachedError } from './errors';
import { planSettlement, SPEND_SHARDS, type ShardWrite, type SpendShard } from './spend-plan';
import { isSettling, LEASE_MS, SettlementLease, type HeldLease, type PolicyAsRead } from './spend-lease';

/**
 * An organization's spend, split over `SPEND_SHARDS` shard rows (`T#<org>#SPEND#<n>`, each its own partition) so
 * concurrent sends do not all write one item. Each shard holds `spendCents` and `headroomCents` (what it may still
 * charge); over the shards, spend + headroom = the limit, exactly.
 * - A charge (`chargeWithin`) takes `cost` from one shard inside the send's transaction, only while that shard's
 *   headroom covers it, it is not `owing` and it follows the limit version the send read.
 * - A settlement (`settleSpend`) rewrites every shard to the current limit in one transaction, one writer at a time
 *   under the lease (./spend-lease.ts), fenced on that lease and the limit version it read. Headroom goes to as many
 *   shards as can each pay the text at hand (./spend-plan.ts); a limit below the spend leaves every shard `owing`.
 * Exact because only settlements write `limitVersion` and `owing` (all shards at once) and charges are conditional,
 * so a shard with headroom >= cost proves the organization's total does too.
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

// A random start per process, then in turn: one instance's sends never pile onto a shard, many instances' spread.
let nextShard = Math.floor(Math.random() * SPEND_SHARDS);
const pickShard = (): number => {
  nextShard = (nextShard + 1) % SPEND_SHARDS;
  return nextShard;
};

/** Conditions on a spend shard, by name. */
const CHARGEABLE = (policy: Limit, costCents: number): Condition => ({
  expression:
    `${CONDITION.rowExists} AND #limitVersion = :version AND #owing = :false` +
    (policy.spendingLimitCents !== null ? ' AND #headroomCents >= :cost' : ''),
  names: { '#limitVersion': 'limitVersion', '#owing': 'owing' },
  values: {
    ':version': policy.version,
    ':false': false,
    ...(policy.spendingLimitCents !== null && { ':cost': costCents }),
  },
});
// A settlement's write: the shard exactly as read, and no settler with a later claim of the lease wrote it since.
const AS_READ_UNFENCED = (from: SpendShard, lease: HeldLease): Condition => ({
  expression:
    '#spendCents = :spend AND #headroomCents = :wasHeadroom AND #limitVersion = :wasVersion AND #owing = :wasOwing' +
    ' AND (attribute_not_exists(#fence) OR #fence <= :fence)',
  names: { '#spendCents': 'spendCents' },
  values: {
    ':spend': from.spendCents,
    ':wasHeadroom': from.headroomCents,
    ':wasVersion': from.limitVersion,
    ':wasOwing': from.owing,
    ':fence': lease.fence,
  },
});

/** A charge offered to the caller's transaction. */
export type Charge = { item: TransactItem; shard: number };

/**
 * What the caller's transaction did with the charge: committed (`charged`, the caller's result), refused by the
 * charge's own condition (`chargeRefused`, the shard's old row, absent when the shard does not exist), or lost a race
 * of the caller's own rows (`LOST_RACE`: the same charge is offered again). Anything else the caller throws.
 */
export type ChargeAttempt<T> = { charged: T } | { chargeRefused: Item | undefined } | typeof LOST_RACE;

/** Each refused round moves to a shard that can pay, waits for a settlement, or ends in a 402. */
const CHARGE_ROUNDS = { what: 'charge a text to the spend shards', rounds: 16, site: 'spend.charge' };
/** Rounds of a settlement whose shards or limit changed between its read and its write. */
const SETTLE_ROUNDS = { what: 'settle the spend shards', rounds: 8, site: 'spend.settle' };
/** How long the operator's settlement waits for other writers before it gives up loudly. */
export const SETTLE_BOUND_MS = 3 * LEASE_MS;

type Shards = (SpendShard | undefined)[];
/** What a charge follows: the limit and its version. */
type Limit = Pick<BillingPolicy, 'spendingLimitCents' | 'version'>;
/** Why a settlement's transaction was refused: its lease is gone (stop), or what it read changed (read again). */
type SettlementRefusal = 'lease lost' | 'changed';

/** One organization's spend: the one place that knows its id, its shards and its lease. */
export class OrganizationSpend {
  readonly lease: SettlementLease;

  constructor(readonly tenantId: string) {
    this.lease = new SettlementLease(tenantId);
  }

  chargeItem(shard: number, costCents: number, policy: Limit): TransactItem {
    const limited = policy.spendingLimitCents !== null;
    const add: Record<string, number> = limited
      ? { spendCents: costCents, headroomCents: -costCents }
      : { spendCents: costCents };
    const update = updateExpression({ add }, CHARGEABLE(policy, costCents));
    return {
      Update: {
        TableName: TABLE_NAME,
        Key: spendShardKey(this.tenantId, shard),
        ...update,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  /** A failed text's refund, to the shard it was charged to: spend down, headroom up (an owing shard's debt first). */
  refundItem(shard: number, costCents: number): TransactItem {
    const update = updateExpression(
      { add: { spendCents: -costCents, headroomCents: costCents } },
      { expression: CONDITION.rowExists },
    );
    return { Update: { TableName: TABLE_NAME, Key: spendShardKey(this.tenantId, shard), ...update } };
  }

  /** Every shard in shard order, strongly consistent; `undefined` where one does not exist yet. */
  async readShards(): Promise<Shards> {
    const keys = Array.from({ length: SPEND_SHARDS }, (_, shard) => spendShardKey(this.tenantId, shard));
    const items = await batchGetItems(keys, { consistentRead: true });
    const byShard = new Map(items.map((item) => [num(item.shard), shardFromItem(item)]));
    return keys.map((_, shard) => byShard.get(shard));
  }

  async charge<T>(
    policy: PolicyAsRead,
    costCents: number,
    attempt: (charge: Charge) => Promise<ChargeAttempt<T>>,
  ): Promise<T> {
    let current = policy;
    let shard = pickShard();
    return optimisticRounds(CHARGE_ROUNDS, async (): Promise<RoundResult<T>> => {
      // Charging shards a writer is rewriting would only collide with it; what it waited for may be a billing block.
      if (isSettling(current)) current = await this.lease.waitOut();
      if (current.billingStatus !== 'active') throw new BillingBlockedError();
      const outcome = await attempt({ item: this.chargeItem(shard, costCents, current), shard });
      if (outcome === LOST_RACE) return LOST_RACE;
      if ('charged' in outcome) return outcome.charged;
      ({ policy: current, shard } = await this.nextAfterRefusal(current, shard, costCents, outcome.chargeRefused));
      return LOST_RACE;
    });
  }

  /** After a shard refused the charge: the policy and shard of the next round, or the 402. */
  private async nextAfterRefusal(
    policy: PolicyAsRead,
    shard: number,
    costCents: number,
    oldRow: Item | undefined,
  ): Promise<{ policy: PolicyAsRead; shard: number }> {
    const refused = oldRow ? shardFromItem(oldRow) : undefined;
    // The shards follow a newer limit than the send read: read the organization row again.
    if (refused && refused.limitVersion > policy.version) return { policy: await this.lease.readPolicy(), shard };
    if (refused && refused.limitVersion === policy.version) {
      const shards = await this.readShards();
      if (shards.every((s) => s !== undefined && s.limitVersion === policy.version)) {
        const total = shards.reduce((sum, s) => sum + s!.headroomCents, 0);
        if (policy.spendingLimitCents !== null && total < costCents) throw new SpendingLimitReachedError();
        const able = ableToPay(shards, costCents);
        if (able !== undefined) return { policy, shard: able };
      }
    }
    // Behind the limit, not made yet, or headroom no text can use (or debt paid back by refunds): settle first.
    const settled = await this.settleOrWait(costCents);
    const [fresh, layout] = await Promise.all([this.lease.readPolicy(), settled ?? this.readShards()]);
    return { policy: fresh, shard: ableToPay(layout, costCents) ?? pickShard() };
  }

  /** A send's settlement: settles under the lease, or waits for the writer holding it (undefined then). */
  async settleOrWait(costCents: number): Promise<Shards | undefined> {
    const lease = await this.lease.claim();
    if (lease) return this.settleHolding(lease, costCents);
    await this.lease.waitOut();
    return undefined;
  }

  /**
   * The operator's settlement (`tenant create`, `tenant update`): returns once every shard follows the limit version
   * the row holds, settling them itself, or waiting out another writer (taking over a lease that ran out). Throws
   * past `boundMs`: the row holds the change, the shards do not yet.
   */
  async settleFully(costCents = 1, boundMs = SETTLE_BOUND_MS): Promise<Shards> {
    const deadline = Date.now() + boundMs;
    while (Date.now() <= deadline) {
      const lease = await this.lease.claim();
      const settled = lease ? await this.settleHolding(lease, costCents) : undefined;
      if (settled) return settled;
      const [policy, shards] = await Promise.all([this.lease.waitOut(deadline), this.readShards()]);
      if (!isSettling(policy) && shards.every((s) => s?.limitVersion === policy.version)) return shards;
    }
    throw new Error(
      `The spend shards of organization ${this.tenantId} did not reach its current limit within ${boundMs} ms ` +
        '(another writer kept the settlement lease): the organization row holds the change; run the command again',
    );
  }

  /** Settlement rounds under a held lease, released at the end; undefined when the lease was lost on the way. */
  async settleHolding(lease: HeldLease, costCents: number): Promise<Shards | undefined> {
    try {
      return await optimisticRounds(SETTLE_ROUNDS, async () => {
        const [policy, shards] = await Promise.all([this.lease.readPolicy(), this.readShards()]);
        const writes = planSettlement(policy, shards, costCents, Math.floor(Math.random() * SPEND_SHARDS));
        const refusal = await this.writeSettlement(lease, writes);
        if (refusal === 'lease lost') return undefined;
        return refusal === 'changed' ? LOST_RACE : layoutAfter(shards, writes);
      });
    } finally {
      await this.lease.release(lease);
    }
  }

  /**
   * One settlement transaction, fenced: never an older limit version than a shard holds, and each write refused when
   * its shard changed since it was read or a holder of a later claim of the lease wrote it ('lease lost': stop).
   */
  async writeSettlement(lease: HeldLease, writes: ShardWrite[]): Promise<SettlementRefusal | undefined> {
    if (writes.length === 0) return undefined;
    // Planned from a limit older than a shard follows: the limit read is stale, read it again.
    if (writes.some(({ from, to }) => from && from.limitVersion > to.limitVersion)) return 'changed';
    try {
      const transaction = new NamedTransaction();
      for (const write of writes) transaction.add(`shard ${write.to.shard}`, this.settlementWrite(write, lease));
      const refusal = await transaction.write();
      if (!refusal) return undefined;
      const fencedOut = refusal.failedNames.some((name) => (num(refusal.failed(name)?.item?.fence) ?? 0) > lease.fence);
      return fencedOut ? 'lease lost' : 'changed';
    } catch (err) {
      // A send that read the row before the lease was taken, still charging a shard: done in a moment, go again.
      if (isContention(err)) return 'changed';
      throw err;
    }
  }

  /** One shard's settlement write (absent: created), carrying the lease's fencing number. */
  private settlementWrite({ from, to }: ShardWrite, lease: HeldLease): TransactItem {
    const Key = spendShardKey(this.tenantId, to.shard);
    if (!from) {
      const Item = { ...Key, type: 'spendShard', tenantId: this.tenantId, ...to, fence: lease.fence };
      return { Put: { TableName: TABLE_NAME, Item, ConditionExpression: CONDITION.rowIsNew } };
    }
    const set = { headroomCents: to.headroomCents, limitVersion: to.limitVersion, owing: to.owing, fence: lease.fence };
    const update = updateExpression({ set }, AS_READ_UNFENCED(from, lease));
    return { Update: { TableName: TABLE_NAME, Key, ...update, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  }
}

/** The shards as a committed settlement left them. */
const layoutAfter = (shards: Shards, writes: ShardWrite[]): Shards =>
  shards.map((shard, i) => writes.find((write) => write.to.shard === i)?.to ?? shard);

/** A shard that can pay, at random weighted by its headroom, so concurrent sends near the limit spread over them. */
function ableToPay(shards: Shards, costCents: number): number | undefined {
  const able = shards.filter((s): s is SpendShard => s !== undefined && !s.owing && s.headroomCents >= costCents);
  if (able.length === 0) return undefined;
  let ticket = Math.random() * able.reduce((sum, s) => sum + s.headroomCents, 0);
  for (const shard of able) {
    ticket -= shard.headroomCents;
    if (ticket < 0) return shard.shard;
  }
  return able[able.length - 1].shard;
}

// ---------- the public calls, by organization id ----------

export const spendFor = (tenantId: string) => new OrganizationSpend(tenantId);

/** The charge's share of a send transaction; refused with the shard's old row. */
export const chargeShard = (tenantId: string, shard: number, costCents: number, policy: Limit) =>
  spendFor(tenantId).chargeItem(shard, costCents, policy);

/** The refund's share of the transaction that fails a text. */
export const refundShard = (tenantId: string, shard: number, costCents: number) =>
  spendFor(tenantId).refundItem(shard, costCents);

export const readShards = (tenantId: string) => spendFor(tenantId).readShards();

/** What the organization has been charged (charges minus refunds); never on a send's path. */
export async function spendOf(tenantId: string): Promise<number> {
  return (await readShards(tenantId)).reduce((sum, shard) => sum + (shard?.spendCents ?? 0), 0);
}

/**
 * Charges `costCents` within the caller's transaction (`attempt`), under `policy` as the send read it (strongly
 * consistent: spend-lease.ts's `spendPolicyOf` also carries the lease). Throws 402 (`BillingBlockedError`,
 * `SpendingLimitReachedError`) when the organization may not spend it.
 */
export const chargeWithin = <T>(
  tenantId: string,
  policy: PolicyAsRead,
  costCents: number,
  attempt: (charge: Charge) => Promise<ChargeAttempt<T>>,
): Promise<T> => spendFor(tenantId).charge(policy, costCents, attempt);

/** The operator's settlement: every shard on the organization's current limit, or a loud error (settleFully). */
export const settleSpend = (tenantId: string, options: { costCents?: number; boundMs?: number } = {}) =>
  spendFor(tenantId).settleFully(options.costCents, options.boundMs);
