import { QueryCommand, ScanCommand, type QueryCommandOutput, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { ROW_TYPES } from '../../lambdas/shared/table/row-types';
import { GSIS } from '../../lambdas/shared/table/table-schema';
import { costCentsOfItem, UNSETTLED_SHARDS, unsettledPk } from '../../lambdas/contexts/texting/messages';
import { spendOf } from '../../lambdas/contexts/texting/spend';

/**
 * The money of one organization, read from the table rather than from what the code under test
 * returns: what it was charged (`spendCents`) and what its texts cost, counting every outbound
 * text that did not fail and was not canceled (a failed or canceled text is refunded; a scheduled one is
 * reserved, so it counts). Every send, failure, callback and sweep must
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

/**
 * Every message row of the organization, whatever conversation or partition it is in (each has its
 * own): a strongly consistent Scan of the test's own table, which only tests may afford.
 */
export async function messageRowsOf(tenantId: string): Promise<Row[]> {
  const rows: Row[] = [];
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: '#type = :message AND tenantId = :tenantId',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':message': ROW_TYPES.message, ':tenantId': tenantId },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    rows.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

export async function moneyLedgerOf(tenantId: string): Promise<MoneyLedger> {
  const owedCents = (await messageRowsOf(tenantId))
    .filter((row) => row.direction === 'outbound' && row.status !== 'failed' && row.status !== 'canceled')
    .reduce((sum, row) => sum + costCentsOfItem(row), 0);
  return { spendCents: await spendOf(tenantId), owedCents };
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
