import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { num, type Item } from '../../shared/table/dynamo';
import { LIMIT_VERSION_ATTRIBUTE, tenantKey, type BillingStatus } from './tenants';

/**
 * What the operator decides about spending, as the organization row holds it: the billing status
 * (read by every send), the limit with its version (`updateTenant` raises `limitVersion` with every
 * change of the limit, which is how the texting context's spend shards learn they must be settled
 * again; a change of the billing status needs no shard write). The settlement lease the same row
 * holds is texting's (texting/spend-lease.ts).
 */
export type BillingPolicy = {
  billingStatus: BillingStatus;
  spendingLimitCents: number | null;
  version: number;
};

/** The policy of an organization row (a row whose limit never changed is version 0). */
export const policyOf = (tenantRow: Item): BillingPolicy => ({
  billingStatus: tenantRow.billingStatus as BillingStatus,
  spendingLimitCents: num(tenantRow.spendingLimitCents),
  version: num(tenantRow[LIMIT_VERSION_ATTRIBUTE]) ?? 0,
});

/**
 * The organization row, strongly consistent (a send's read: a block or a lowered limit bites from the first send after
 * it).
 */
export async function readOrganizationRow(tenantId: string): Promise<Item> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId), ConsistentRead: true }),
  );
  if (!Item) throw new NotFoundError('Tenant');
  return Item;
}

/** The organization's billing policy, strongly consistent. */
export const readBillingPolicy = async (tenantId: string): Promise<BillingPolicy> =>
  policyOf(await readOrganizationRow(tenantId));
