import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, isConditionalCheckFailed, num, type Item } from '../../shared/table/dynamo';
import { updateExpression, type Condition } from '../../shared/table/update-expression';
import { policyOf, readOrganizationRow, type BillingPolicy } from '../tenants/billing-policy';
import { tenantKey } from '../tenants/tenants';
import { atSite } from '../../shared/table/round-site';
import { roundLost } from '../../shared/table/rounds-lost';

/**
 * The settlement lease: one writer at a time rewrites an organization's spend shards (./spend.ts). It lives on the
 * organization row, which every send reads anyway, so a send sees a settlement under way at no extra read.
 */
const UNTIL = 'spendSettlingUntil';
const HOLDER = 'spendSettlingHolder';
/** Raised by every claim: the fencing number a holder's shard writes carry (./spend.ts refuses a lower one). */
const FENCE = 'spendSettlementFence';

/** Far longer than a settlement takes (a read and one transaction); a holder that dies blocks no one for longer. */
export const LEASE_MS = 3_000;
/** Where the lease is claimed (shared/table/rounds-lost.ts). */
const LEASE_SITE = 'spend.lease';
/** How often a send waiting out a settlement reads the organization row again (on average). */
const POLL_MS = 40;

/** The billing policy with the lease the same row holds (`settlingUntil`: null when no writer holds it). */
export type SpendPolicy = BillingPolicy & { settlingUntil: number | null };
/** A policy as a caller read it: with the lease when it read it from the row (spendPolicyOf), without otherwise. */
export type PolicyAsRead = BillingPolicy & { settlingUntil?: number | null };

export const spendPolicyOf = (organizationRow: Item): SpendPolicy => ({
  ...policyOf(organizationRow),
  settlingUntil: num(organizationRow[UNTIL]),
});

export const isSettling = (policy: PolicyAsRead, nowMs = Date.now()): boolean =>
  policy.settlingUntil != null && policy.settlingUntil >= nowMs;

/** A claim that succeeded: `holder` names it on the row, `fence` (higher than every earlier claim's) fences its writes. */
export type HeldLease = { holder: string; untilMs: number; fence: number };

/** Conditions on the organization row, by name. */
const LEASE_IS_FREE = (nowMs: number): Condition => ({
  expression: `${CONDITION.rowExists} AND (attribute_not_exists(#${UNTIL}) OR #${UNTIL} < :now)`,
  values: { ':now': nowMs },
});
const LEASE_IS_MINE = (lease: HeldLease): Condition => ({
  expression: `#${HOLDER} = :holder`,
  names: { [`#${HOLDER}`]: HOLDER },
  values: { ':holder': lease.holder },
});

/** One organization's settlement lease. */
export class SettlementLease {
  constructor(readonly tenantId: string) {}

  readPolicy = async (): Promise<SpendPolicy> => spendPolicyOf(await readOrganizationRow(this.tenantId));

  /** Takes the lease when no one holds it or its holder's time ran out (a crashed writer); undefined when held. */
  async claim(ms = LEASE_MS, nowMs = Date.now()): Promise<HeldLease | undefined> {
    const holder = `${nowMs}-${Math.random().toString(36).slice(2)}`;
    const untilMs = nowMs + ms;
    const claim = updateExpression(
      { set: { [UNTIL]: untilMs, [HOLDER]: holder }, add: { [FENCE]: 1 } },
      LEASE_IS_FREE(nowMs),
    );
    try {
      const { Attributes } = await atSite(LEASE_SITE, () => this.update({ ...claim, ReturnValues: 'UPDATED_NEW' }));
      return { holder, untilMs, fence: num(Attributes?.[FENCE]) ?? 0 };
    } catch (err) {
      if (isConditionalCheckFailed(err)) {
        roundLost(LEASE_SITE); // another writer holds it: the caller waits it out
        return undefined;
      }
      throw err;
    }
  }

  /** Gives the lease back; one that ran out and was taken over is the new holder's. */
  async release(lease: HeldLease): Promise<void> {
    try {
      await this.update(updateExpression({ remove: [UNTIL, HOLDER] }, LEASE_IS_MINE(lease)));
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  /** Waits until no writer holds the lease (released, or run out), or `deadlineMs`; the policy as it then stands. */
  async waitOut(deadlineMs = Date.now() + LEASE_MS): Promise<SpendPolicy> {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS / 2 + Math.random() * POLL_MS));
      const policy = await this.readPolicy();
      if (!isSettling(policy) || Date.now() > deadlineMs) return policy;
    }
  }

  private update(expression: ReturnType<typeof updateExpression> & { ReturnValues?: 'UPDATED_NEW' }) {
    return dynamo.send(new UpdateCommand({ TableName: TABLE_NAME, Key: tenantKey(this.tenantId), ...expression }));
  }
}
