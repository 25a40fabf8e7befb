import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { batchGetItems } from '../../shared/table/batch-get';
import { CONDITION, type TransactItem } from '../../shared/table/dynamo';
import type { FailedItem, NamedItems } from '../../shared/table/named-transaction';
import { claimItem, externalIdClaimItem, externalIdClaimKey, numberClaimKey, type NumberClaim } from './contact-rows';
import type { Contact } from './schemas';

/**
 * The claims of numbers and external ids (contact-rows.ts has their keys): reads, strongly
 * consistent since the write that follows is conditioned on them, and the writes that move a
 * claim in a contact's own transaction.
 */

/** What a claim row says, read strongly consistent (the write that follows is conditioned on it). */
export async function readNumberClaim(tenantId: string, number: string): Promise<NumberClaim | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }),
  );
  return numberClaimOf(Item);
}

/** The claim a number's claim row holds (none: nobody holds the number). */
export const numberClaimOf = (item: Record<string, unknown> | undefined): NumberClaim | undefined =>
  typeof item?.contactId === 'string' ? { contactId: item.contactId, named: item.named === true } : undefined;

export async function readExternalIdClaim(tenantId: string, externalId: string): Promise<string | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: externalIdClaimKey(tenantId, externalId), ConsistentRead: true }),
  );
  return typeof Item?.contactId === 'string' ? Item.contactId : undefined;
}

/** The claims of many numbers and external ids, read strongly consistent in one BatchGetItem per 100 keys. */
export async function claimsOf(
  tenantId: string,
  items: readonly { phoneNumber: string; externalId?: string | null }[],
) {
  const numbers = [...new Set(items.map((item) => item.phoneNumber))];
  const externalIds = [...new Set(items.flatMap((item) => (item.externalId ? [item.externalId] : [])))];
  const rows = await batchGetItems(
    [...numbers.map((n) => numberClaimKey(tenantId, n)), ...externalIds.map((id) => externalIdClaimKey(tenantId, id))],
    { consistentRead: true },
  );
  const byPk = new Map(rows.map((row) => [row.pk as string, row]));
  const numberClaims = new Map<string, NumberClaim>();
  const externalIdClaims = new Map<string, string>();
  for (const n of numbers) {
    const row = byPk.get(numberClaimKey(tenantId, n).pk);
    if (row) numberClaims.set(n, { contactId: row.contactId as string, named: row.named === true });
  }
  for (const id of externalIds) {
    const row = byPk.get(externalIdClaimKey(tenantId, id).pk);
    if (row) externalIdClaims.set(id, row.contactId as string);
  }
  return { numberClaims, externalIdClaims };
}

/** An external id's claim moving to a contact: the old one freed (if it still names the contact), the new one taken. */
export function externalIdMove(
  tenantId: string,
  contactId: string,
  from: string | null,
  to: string | null,
): NamedItems<'externalIdRelease' | 'externalIdClaim'> {
  return {
    externalIdRelease: from !== null ? claimRelease(externalIdClaimKey(tenantId, from), contactId) : undefined,
    externalIdClaim:
      to !== null
        ? {
            Put: {
              TableName: TABLE_NAME,
              Item: externalIdClaimItem(tenantId, to, contactId),
              ConditionExpression: CONDITION.rowIsNew,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
            },
          }
        : undefined,
  };
}

/** Frees a claim (a number's or an external id's), if it still names the contact. */
export const claimRelease = (key: { pk: string; sk: string }, contactId: string): TransactItem => ({
  Delete: {
    TableName: TABLE_NAME,
    Key: key,
    ConditionExpression: 'contactId = :contactId',
    ExpressionAttributeValues: { ':contactId': contactId },
  },
});

/** The contact a claim write found in the way (it asked for ALL_OLD), unless it is `contactId` itself. */
export function otherHolder(failed: FailedItem | undefined, contactId: string): string | undefined {
  const holder = failed?.item?.contactId;
  return typeof holder === 'string' && holder !== contactId ? holder : undefined;
}

/** A renumber's claim writes: free the old number (if it still names this contact), take the new one. */
export function claimMove(
  tenantId: string,
  contactId: string,
  current: Contact,
  newNumber: string,
): NamedItems<'numberRelease' | 'numberClaim'> {
  return {
    numberRelease: current.normalizedNumber
      ? claimRelease(numberClaimKey(tenantId, current.normalizedNumber), contactId)
      : undefined,
    numberClaim: {
      Put: {
        TableName: TABLE_NAME,
        Item: claimItem(tenantId, newNumber, { contactId, named: !current.isAutoCreated }),
        ConditionExpression: CONDITION.rowIsNew,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    },
  };
}
