import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { CONDITION, isConditionalCheckFailed, num, type Item } from '../../shared/table/dynamo';
import { updateExpression } from '../../shared/table/update-expression';
import { LIMIT_VERSION_ATTRIBUTE, tenantKey, type BillingStatus } from './tenants';

/**
 * What the operator decides about spending, as the organization row holds it: the billing status
 * (read by every send), the limit with its version (`updateTenant` raises `limitVersion` with every
 * change of the limit, which is how the texting context's spend shards learn they must be settled
 * again; a change of the billing status needs no shard write), and whether a writer is settling
 * the shards right now (`settlingUntil`, the settlement lease below).
 */
export type BillingPolicy = {
  billingStatus: BillingStatus;
  spendingLimitCents: number | null;
  version: number;
  settlingUntil: number | null;
};

const SETTLING_UNTIL = 'spendSettlingUntil';
const SETTLING_HOLDER = 'spendSettlingHolder';

/** The policy of an organization row (a row whose limit never changed is version 0). */
export const policyOf = (tenantRow: Item): BillingPolicy => ({
  billingStatus: tenantRow.billingStatus as BillingStatus,
  spendingLimitCents: num(tenantRow.spendingLimitCents),
  version: num(tenantRow[LIMIT_VERSION_ATTRIBUTE]) ?? 0,
  settlingUntil: num(tenantRow[SETTLING_UNTIL]),
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

/**
 * The settlement lease, kept on the organization row that every send reads anyway: while a writer
 * holds it (until `untilMs`), sends see `settlingUntil` in the row they read and wait instead of
 * charging shards the writer is rewriting, at no extra read. Taken only when no one holds it or
 * the holder's time ran out (a crashed writer). Returns false when another writer holds it.
 */
export async function claimSpendSettlement(
  tenantId: string,
  holder: string,
  untilMs: number,
  nowMs = Date.now(),
): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: tenantKey(tenantId),
        ...updateExpression(
          { set: { [SETTLING_UNTIL]: untilMs, [SETTLING_HOLDER]: holder } },
          {
            expression: `${CONDITION.rowExists} AND (attribute_not_exists(#${SETTLING_UNTIL}) OR #${SETTLING_UNTIL} < :now)`,
            values: { ':now': nowMs },
          },
        ),
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

/** Gives the lease back; a lease that ran out and was taken by another writer is theirs now. */
export async function endSpendSettlement(tenantId: string, holder: string): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: tenantKey(tenantId),
        ...updateExpression(
          { remove: [SETTLING_UNTIL, SETTLING_HOLDER] },
          { expression: `#${SETTLING_HOLDER} = :holder`, values: { ':holder': holder } },
        ),
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}
