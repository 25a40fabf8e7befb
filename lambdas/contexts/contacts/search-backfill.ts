import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { cancellationReasons, CONDITION, type Item } from '../../shared/table/dynamo';
import { contactKey, fromItem } from './contacts';
import { insertIndex, SEARCH_INDEX_ATTRIBUTE } from './search-rows';

/** The attributes search read before the index (lower-cased copies for `contains` filters). */
const LEGACY_SEARCH_ATTRIBUTES = ['searchName', 'searchCompany', 'searchDigits'];

export type BackfillOutcome = 'indexed' | 'alreadyIndexed' | 'deleted';

/**
 * The migration step for one contact row written before the search index: files it under its
 * entries and marks it indexed, in one transaction guarded on the row being unchanged since it
 * was read (`updatedAt`) and still unindexed. A row changed meanwhile is read again; a row some
 * write has indexed meanwhile is left alone. Idempotent: an indexed row is never written again.
 */
export async function indexContactRow(row: Item): Promise<BackfillOutcome> {
  let current: Item | undefined = row;
  for (let round = 0; round < 4; round += 1) {
    if (!current) return 'deleted';
    if (typeof current[SEARCH_INDEX_ATTRIBUTE] === 'string') return 'alreadyIndexed';
    const contact = fromItem(current);
    const search = insertIndex(contact.tenantId, contact.id, contact);
    try {
      await dynamo.send(new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: TABLE_NAME,
              Key: contactKey(contact.tenantId, contact.id),
              UpdateExpression: `SET #searchIndex = :fingerprint REMOVE ${LEGACY_SEARCH_ATTRIBUTES.join(', ')}`,
              ConditionExpression: `${CONDITION.rowExists} AND ${search.guard.expression} AND #updatedAt = :updatedAt`,
              ExpressionAttributeNames: { ...search.guard.names, '#updatedAt': 'updatedAt' },
              ExpressionAttributeValues: { ':fingerprint': search.fingerprint, ':updatedAt': contact.updatedAt },
            },
          },
          ...search.writes,
        ],
      }));
      return 'indexed';
    } catch (err) {
      if (!cancellationReasons(err)) throw err;
      const { Item: fresh } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(contact.tenantId, contact.id), ConsistentRead: true }));
      current = fresh;
    }
  }
  throw new Error(`indexContactRow: contact ${String(row.id)} kept changing; run the backfill again`);
}
