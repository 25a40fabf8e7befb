import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { PREFIX, tenantPk } from '../../lambdas/shared/table/keys';
import { ROW_TYPES } from '../../lambdas/shared/table/row-types';
import { GSIS } from '../../lambdas/shared/table/table-schema';
import { costCentsOfItem, UNSETTLED_SHARDS, unsettledPk } from '../../lambdas/contexts/texting/messages';
import { getTenant } from '../../lambdas/contexts/tenants/tenants';

/**
 * The money of one organization, read from the table rather than from what the code under test
 * returns: what it was charged (`spendCents`) and what its texts cost, counting every outbound
 * text that did not fail (a failed text is refunded). Every send, failure, callback and sweep must
 * leave the two equal: `expect(ledger.spendCents).toBe(ledger.owedCents)`.
 */
export type MoneyLedger = { spendCents: number; owedCents: number };

type Row = Record<string, unknown>;

async function queryAll(input: ConstructorParameters<typeof QueryCommand>[0]): Promise<Row[]> {
  const rows: Row[] = [];
  let startKey: QueryCommandOutput['LastEvaluatedKey'];
  do {
    const page = await dynamo.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    rows.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

export async function moneyLedgerOf(tenantId: string): Promise<MoneyLedger> {
  // Every message row of the organization, whatever conversation it is in.
  const rows = await queryAll({
    TableName: TABLE_NAME,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :message)',
    ExpressionAttributeValues: { ':pk': tenantPk(tenantId), ':message': PREFIX.message },
    ConsistentRead: true,
  });
  const owedCents = rows
    .filter((row) => row.type === ROW_TYPES.message && row.direction === 'outbound' && row.status !== 'failed')
    .reduce((sum, row) => sum + costCentsOfItem(row), 0);
  const tenant = await getTenant(tenantId);
  if (!tenant) throw new Error(`moneyLedgerOf: organization ${tenantId} does not exist`);
  return { spendCents: tenant.spendCents, owedCents };
}

/** The ids of the organization's texts in the settlement sweep's worklist (all shards). */
export async function unsettledMessageIds(tenantId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let shard = 0; shard < UNSETTLED_SHARDS; shard += 1) {
    const rows = await queryAll({
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi2.indexName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey },
      ExpressionAttributeValues: { ':pk': unsettledPk(shard) },
    });
    ids.push(...rows.filter((row) => row.tenantId === tenantId).map((row) => row.id as string));
  }
  return ids;
}
