import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { TemporarilyUnavailableError } from '../../shared/errors';
import { batchGetItems } from '../../shared/table/batch-get';
import { CONDITION, num, transactWrite, type Item, type TransactItem } from '../../shared/table/dynamo';
import { isContention } from '../../shared/table/contention';
import { ownPartitionKey } from '../../shared/table/keys';
import { policyOf, tenantKey, type BillingPolicy } from '../tenants/tenants';

/**
 * An organization's spend, kept off its organization row: every text is charged, so one counter
 * item would take a write from every send of the organization, more than DynamoDB gives one item
 * (about 1,000 write units per second) and a transaction conflict for every pair of concurrent
 * sends. The spend is split over `SPEND_SHARDS` shard rows, each its own partition key
 * (`T#<org>#SPEND#<n>`), and each holding a slice of the spending limit: its **headroom**, what it
 * may still charge. A send charges one shard (taken in turn from a random start, `pickShard`) in one
 * conditional update inside the send transaction: `ADD spend +cost, headroom -cost` only while
 * `headroom >= cost`, the shard's copy of the billing status is `active` and its policy version (the
 * organization's billing status and limit as last spread over the shards) is the one read. The sum of headroom and spend over the shards is the limit, so the limit is exact: spend
 * never goes past it, whatever runs concurrently. A shard without headroom for a text sends the
 * charge to the shard with the most, or first moves every other shard's headroom to it in one
 * transaction (`rebalance`), so a text is refused with 402 only when the organization's whole
 * headroom is smaller than its cost. A refund goes back to the shard that was charged.
 *
 * The operator's limit and billing status live on the organization row with a `policyVersion`
 * that every change of either raises. Each shard holds a copy of the policy and its version; a
 * charge holds only while the shard's version is the one the send read (strongly consistent) from
 * the organization row, so a shard that has not caught up with a change refuses the charge, and
 * the send brings every shard up to date (`syncPolicy`) before charging: a blocked organization
 * or a lowered limit bites from the first send that reads it, without the operator's write having
 * to reach the shards in the same transaction. An organization written before shards existed keeps
 * its spend in `spendCents` on its row until its first send or the key-layout migration moves it
 * onto the shards (`createSpendShards`).
 */
export const SPEND_SHARDS = 32;

/** The organization row's marker: its spend lives on this many shards. */
const SHARDS_ATTRIBUTE = 'spendShards';


export const spendShardKey = (tenantId: string, shard: number) => ownPartitionKey(tenantId, 'spendShard', String(shard));

export type SpendShard = { shard: number; spendCents: number; headroomCents: number; billingStatus: string; policyVersion: number };

export const shardFromItem = (item: Item): SpendShard => ({
  shard: num(item.shard) ?? 0,
  spendCents: num(item.spendCents) ?? 0,
  headroomCents: num(item.headroomCents) ?? 0,
  billingStatus: item.billingStatus as string,
  policyVersion: num(item.policyVersion) ?? 0,
});

/** A limit split over the shards: equal slices, the remainder on the first ones; none below 0. */
export function headroomSlices(limitCents: number | null, spentCents: number, shards = SPEND_SHARDS): number[] {
  const total = limitCents === null ? 0 : Math.max(0, limitCents - spentCents);
  return Array.from({ length: shards }, (_, i) => Math.floor(total / shards) + (i < total % shards ? 1 : 0));
}

/**
 * Which shard a send charges first: the next one in turn from a random start per process, so the
 * sends of one function instance never pile onto a shard and those of many instances spread at
 * random. `random` picks a shard outright (tests).
 */
let nextShard = Math.floor(Math.random() * SPEND_SHARDS);
export const pickShard = (random?: () => number): number => {
  if (random) return Math.floor(random() * SPEND_SHARDS);
  nextShard = (nextShard + 1) % SPEND_SHARDS;
  return nextShard;
};

/**
 * The charge's share of the send transaction (see above). Refused, with the old row returned, when
 * the shard lacks headroom, billing is not active, its policy is not the one read, or it does not
 * exist yet: `chargeRefusalOf` says which.
 */
export function chargeShard(tenantId: string, shard: number, costCents: number, policy: BillingPolicy): TransactItem {
  const limited = policy.spendingLimitCents !== null;
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: spendShardKey(tenantId, shard),
      UpdateExpression: limited ? 'ADD #spend :cost, #headroom :minusCost' : 'ADD #spend :cost',
      ConditionExpression: `${CONDITION.rowExists} AND #version = :version AND #billingStatus = :active` + (limited ? ' AND #headroom >= :cost' : ''),
      ExpressionAttributeNames: { '#spend': 'spendCents', '#version': 'policyVersion', '#billingStatus': 'billingStatus', ...(limited && { '#headroom': 'headroomCents' }) },
      ExpressionAttributeValues: { ':cost': costCents, ':version': policy.version, ':active': 'active', ...(limited && { ':minusCost': -costCents }) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Why a shard refused a charge, from the row it returned (`chargeShard`'s conditions, in order). */
export type ChargeRefusal = 'noShards' | 'policyChanged' | 'billingBlocked' | 'noHeadroom';

export function chargeRefusalOf(oldRow: Item | undefined, policy: BillingPolicy): ChargeRefusal {
  if (!oldRow) return 'noShards';
  const shard = shardFromItem(oldRow);
  if (shard.policyVersion !== policy.version) return 'policyChanged';
  return shard.billingStatus !== 'active' ? 'billingBlocked' : 'noHeadroom';
}

/** Gives a failed text's charge back to the shard it was taken from, in the transaction that fails it. */
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

/** Every shard of the organization, in shard order; `undefined` where one does not exist yet. */
export async function readShards(tenantId: string): Promise<(SpendShard | undefined)[]> {
  const keys = Array.from({ length: SPEND_SHARDS }, (_, shard) => spendShardKey(tenantId, shard));
  const items = await batchGetItems(keys, { consistentRead: true });
  const byShard = new Map(items.map((item) => [num(item.shard), shardFromItem(item)]));
  return keys.map((_, shard) => byShard.get(shard));
}

/**
 * What the organization has been charged: the shards' spend, plus what its row still records from
 * before shards (not yet moved onto them). For the operator and the tests; never on a send's path.
 */
export async function spendOf(tenantId: string): Promise<number> {
  const [shards, { Item: tenantRow }] = await Promise.all([
    readShards(tenantId),
    dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId), ConsistentRead: true })),
  ]);
  return shards.reduce((sum, shard) => sum + (shard?.spendCents ?? 0), 0) + (num(tenantRow?.spendCents) ?? 0);
}

/** True when the organization row says its spend lives on shards. */
export const hasSpendShards = (tenantRow: Item): boolean => num(tenantRow[SHARDS_ATTRIBUTE]) === SPEND_SHARDS;

/**
 * Creates the shards of an organization that has none (its first send, or the migration): the
 * spend its row recorded (`spendCents`, from before shards) moves onto shard 0 and the rest of the
 * limit is split as headroom, in one transaction guarded on the row's spend and policy being the
 * ones read. Returns false when another writer changed the row first (read it again).
 */
export async function createSpendShards(tenantRow: Item): Promise<boolean> {
  const tenantId = tenantRow.id as string;
  const legacySpend = num(tenantRow.spendCents);
  const policy = policyOf(tenantRow);
  const slices = headroomSlices(policy.spendingLimitCents, legacySpend ?? 0);
  const reasons = await transactWrite([
    {
      Update: {
        TableName: TABLE_NAME,
        Key: tenantKey(tenantId),
        UpdateExpression: `SET #shards = :shards REMOVE #spend`,
        ConditionExpression:
          `${CONDITION.rowExists} AND attribute_not_exists(#shards) AND #updatedAt = :updatedAt AND ` +
          (legacySpend === null ? 'attribute_not_exists(#spend)' : '#spend = :spend'),
        ExpressionAttributeNames: { '#shards': SHARDS_ATTRIBUTE, '#spend': 'spendCents', '#updatedAt': 'updatedAt' },
        ExpressionAttributeValues: { ':shards': SPEND_SHARDS, ':updatedAt': tenantRow.updatedAt, ...(legacySpend !== null && { ':spend': legacySpend }) },
      },
    },
    ...slices.map((headroom, shard) => ({
      Put: {
        TableName: TABLE_NAME,
        Item: shardItem(tenantId, shard, { spendCents: shard === 0 ? (legacySpend ?? 0) : 0, headroomCents: headroom }, policy),
        ConditionExpression: CONDITION.rowIsNew,
      },
    })),
  ]);
  return reasons === undefined;
}

/** The organization row, strongly consistent: the spend policy and whether its shards exist. */
export async function readOrganizationRow(tenantId: string): Promise<Item> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId), ConsistentRead: true }));
  if (!Item) throw new Error(`spend: organization ${tenantId} is missing`);
  return Item;
}

/** Rounds of making the shards when another writer changed the organization row first. */
const SHARD_ROUNDS = 4;

/**
 * The organization row once its spend shards exist: made here when they do not (its first send),
 * or by whichever concurrent first send wins (the others meet its shards: one transaction holds all
 * 33 rows, so they collide with it rather than make a second set). Bounded: a row that never shows
 * shards (a changed `SPEND_SHARDS`, a row changing all the time) answers 503, not a loop.
 */
export async function ensureSpendShards(tenantRow: Item, readAgain: () => Promise<Item>): Promise<Item> {
  let row = tenantRow;
  for (let round = 0; round < SHARD_ROUNDS && !hasSpendShards(row); round += 1) {
    try {
      if (await createSpendShards(row)) return readAgain();
    } catch (err) {
      if (!isContention(err) || round === SHARD_ROUNDS - 1) throw err;
    }
    row = await readAgain();
  }
  if (!hasSpendShards(row)) throw new TemporarilyUnavailableError(`ensureSpendShards: organization ${row.id as string} showed no shards after ${SHARD_ROUNDS} rounds`);
  return row;
}

const shardItem = (tenantId: string, shard: number, amounts: { spendCents: number; headroomCents: number }, policy: BillingPolicy): Item => ({
  ...spendShardKey(tenantId, shard),
  type: 'spendShard',
  tenantId,
  shard,
  ...amounts,
  billingStatus: policy.billingStatus,
  policyVersion: policy.version,
});

/**
 * Brings every shard up to `policy` (read strongly consistent from the organization row): the copy
 * of the billing status and version, and the headroom split again from the new limit and the spend
 * read, in one transaction guarded on each shard's spend being the one read and its version being
 * older (a charge in between, or another send syncing first, cancels it: read again). Returns false
 * when it lost such a race.
 */
export async function syncPolicy(tenantId: string, shards: SpendShard[], policy: BillingPolicy): Promise<boolean> {
  const stale = shards.filter((shard) => shard.policyVersion < policy.version);
  if (stale.length === 0) return true;
  const spent = shards.reduce((sum, shard) => sum + shard.spendCents, 0);
  // Only stale shards are rewritten; the headroom others hold stays theirs, so the split covers the rest.
  const kept = shards.filter((shard) => shard.policyVersion >= policy.version).reduce((sum, shard) => sum + shard.headroomCents, 0);
  const slices = headroomSlices(policy.spendingLimitCents === null ? null : policy.spendingLimitCents - kept, spent, stale.length);
  const reasons = await transactWrite(
    stale.map((shard, i) => ({
      Update: {
        TableName: TABLE_NAME,
        Key: spendShardKey(tenantId, shard.shard),
        UpdateExpression: 'SET #headroom = :headroom, #billingStatus = :status, #version = :version',
        ConditionExpression: '#spend = :spend AND #version = :was',
        ExpressionAttributeNames: { '#headroom': 'headroomCents', '#billingStatus': 'billingStatus', '#version': 'policyVersion', '#spend': 'spendCents' },
        ExpressionAttributeValues: { ':headroom': slices[i], ':status': policy.billingStatus, ':version': policy.version, ':spend': shard.spendCents, ':was': shard.policyVersion },
      },
    })),
  );
  return reasons === undefined;
}

/**
 * Gathers the headroom of every other shard onto `target`, in one transaction guarded on each
 * donor's headroom being the one read, so the total is unchanged: the limit stays exact. Returns
 * false when a shard changed meanwhile (read again).
 */
export async function rebalance(tenantId: string, shards: SpendShard[], target: number): Promise<boolean> {
  const donors = shards.filter((shard) => shard.shard !== target && shard.headroomCents > 0);
  if (donors.length === 0) return true;
  const moved = donors.reduce((sum, shard) => sum + shard.headroomCents, 0);
  const reasons = await transactWrite([
    ...donors.map((shard) => ({
      Update: {
        TableName: TABLE_NAME,
        Key: spendShardKey(tenantId, shard.shard),
        UpdateExpression: 'SET #headroom = :zero',
        ConditionExpression: '#headroom = :was',
        ExpressionAttributeNames: { '#headroom': 'headroomCents' },
        ExpressionAttributeValues: { ':zero': 0, ':was': shard.headroomCents },
      },
    })),
    {
      Update: {
        TableName: TABLE_NAME,
        Key: spendShardKey(tenantId, target),
        UpdateExpression: 'ADD #headroom :moved',
        ConditionExpression: CONDITION.rowExists,
        ExpressionAttributeNames: { '#headroom': 'headroomCents' },
        ExpressionAttributeValues: { ':moved': moved },
      },
    },
  ]);
  return reasons === undefined;
}
