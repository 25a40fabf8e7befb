import type { BillingPolicy } from '../tenants/billing-policy';

/** What a settlement follows: the limit and its version. */
type Limit = Pick<BillingPolicy, 'spendingLimitCents' | 'version'>;

/**
 * The arithmetic of a settlement (./spend.ts), with no table: what every spend shard should hold
 * under the organization's current policy. Pure, so its rules are unit-tested case by case.
 */
export const SPEND_SHARDS = 32;

export type SpendShard = {
  shard: number;
  spendCents: number;
  headroomCents: number;
  limitVersion: number;
  owing: boolean;
};

/** A shard as read (undefined: not created yet) and as the settlement writes it. */
export type ShardWrite = { from: SpendShard | undefined; to: SpendShard };

/**
 * The writes that settle the shards under `policy`, or none when they already hold a layout a
 * text of `costCents` can be charged under exactly:
 * - every shard exists and follows the policy's limit version;
 * - no limit: nothing is owed, headroom is not kept;
 * - a limit: headroom over the shards is the limit minus the spend. Below zero, every shard is
 *   `owing` with its part of the debt (<= 0), so none can charge until refunds pay it. Otherwise
 *   the headroom goes to as many shards as can each pay the text (`floor(headroom / cost)`, at most
 *   all of them), starting at `offset`, in near-equal parts: far from the limit that is every
 *   shard, near it a few, so concurrent sends spread as widely as the headroom allows.
 */
export function planSettlement(
  policy: Limit,
  shards: readonly (SpendShard | undefined)[],
  costCents: number,
  offset: number,
): ShardWrite[] {
  if (isSettled(policy, shards, costCents)) return [];
  const limit = policy.spendingLimitCents;
  const spent = shards.reduce((sum, s) => sum + (s?.spendCents ?? 0), 0);
  const headroom = limit === null ? 0 : limit - spent;
  const owing = headroom < 0;
  const holders =
    owing || headroom < costCents ? SPEND_SHARDS : Math.min(SPEND_SHARDS, Math.floor(headroom / costCents));
  const parts = splitEvenly(headroom, holders);
  return shards.flatMap((from, shard) => {
    const place = (shard - offset + SPEND_SHARDS) % SPEND_SHARDS;
    const to: SpendShard = {
      shard,
      spendCents: from?.spendCents ?? 0,
      headroomCents: place < holders ? parts[place] : 0,
      limitVersion: policy.version,
      owing,
    };
    return from && sameShard(from, to) ? [] : [{ from, to }];
  });
}

/** True when the shards hold a layout a text of `costCents` is charged under exactly (see above). */
function isSettled(policy: Limit, shards: readonly (SpendShard | undefined)[], costCents: number): boolean {
  if (
    shards.length !== SPEND_SHARDS ||
    !shards.every((s): s is SpendShard => s !== undefined && s.limitVersion === policy.version)
  )
    return false;
  if (policy.spendingLimitCents === null) return shards.every((s) => !s.owing);
  const headroom = shards.reduce((sum, s) => sum + s.headroomCents, 0);
  const spent = shards.reduce((sum, s) => sum + s.spendCents, 0);
  // Spend + headroom is the limit by construction; a layout where it is not is settled again, not trusted.
  if (headroom + spent !== policy.spendingLimitCents) return false;
  if (headroom < 0) return shards.every((s) => s.owing);
  return shards.every((s) => !s.owing) && (headroom < costCents || shards.some((s) => s.headroomCents >= costCents));
}

/** `total` in `parts` near-equal whole parts (the larger ones first), negative totals too. */
export function splitEvenly(total: number, parts: number): number[] {
  const sign = total < 0 ? -1 : 1;
  const magnitude = Math.abs(total);
  return Array.from(
    { length: parts },
    (_, i) => sign * (Math.floor(magnitude / parts) + (i < magnitude % parts ? 1 : 0)) || 0,
  );
}

const sameShard = (a: SpendShard, b: SpendShard): boolean =>
  a.headroomCents === b.headroomCents &&
  a.limitVersion === b.limitVersion &&
  a.owing === b.owing &&
  a.spendCents === b.spendCents;
