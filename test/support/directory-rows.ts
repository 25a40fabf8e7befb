import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { numberClaimKey } from '../../lambdas/contexts/contacts/contact-rows';
import { batchGetItems } from '../../lambdas/shared/table/batch-get';
import { PREFIX, tenantScopedPk } from '../../lambdas/shared/table/keys';
import { GSIS } from '../../lambdas/shared/table/table-schema';

type Row = Record<string, unknown>;

/**
 * Every contact row of an organization (test code only: a whole partition of the `directory`
 * index). Contacts have partitions of their own, so the index is how they are enumerated; on
 * DynamoDB Local and the limits engine it is written with the row.
 */
export async function contactRowsOf(tenantId: string): Promise<Row[]> {
  const rows: Row[] = [];
  let startKey: Row | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        IndexName: GSIS.directory.indexName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': GSIS.directory.partitionKey },
        ExpressionAttributeValues: { ':pk': tenantScopedPk(tenantId, PREFIX.contacts) },
        ExclusiveStartKey: startKey,
      }),
    );
    rows.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows.filter((row) => row.type === 'contact');
}

/** The claim rows of these numbers in an organization, read strongly consistent (those that exist). */
export const numberClaimRowsOf = (tenantId: string, numbers: readonly string[]): Promise<Row[]> =>
  batchGetItems(
    numbers.map((number) => numberClaimKey(tenantId, number)),
    { consistentRead: true },
  );
