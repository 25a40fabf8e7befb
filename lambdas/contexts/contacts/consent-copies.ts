import { TemporarilyUnavailableError } from '../../shared/errors';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, failedCondition, transactWrite, type CancellationReason, type Item, type TransactItem } from '../../shared/table/dynamo';
import { consentAttributes, consentChangeUpdate, consentOfChange, ledgerSnapshot, type Consent, type ConsentChange } from '../consent/ledger';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { changeIndexKeys } from './contact-changes';
import { contactKey, numberClaimKey } from './contacts';

/**
 * A consent change as it is written: the number's ledger row (consent/ledger.ts), and the copy on
 * the contact that holds the number, in one transaction. The holder is read from the number's
 * claim and the transaction checks the claim still names it (or that nobody holds the number), so
 * a change racing a number moving between contacts (a renumber, a delete, a create) either lands
 * before the move, whose own write then copies the new value, or fails and is written again with
 * the new holder. The ledger's condition (a later change on record) comes first: index 0.
 */

export async function consentChangeWrites(tenantId: string, number: string, change: ConsentChange): Promise<TransactItem[]> {
  const { Item: claim } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }));
  const ledger = consentChangeUpdate(tenantId, number, change);
  if (!claim) {
    return [ledger, { ConditionCheck: { TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConditionExpression: CONDITION.rowIsNew } }];
  }
  return [
    ledger,
    consentCopyUpdate(tenantId, claim.contactId as string, number, consentOfChange(change)),
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: numberClaimKey(tenantId, number),
        ConditionExpression: 'contactId = :holder',
        ExpressionAttributeValues: { ':holder': claim.contactId },
      },
    },
  ];
}

/**
 * A consent's copy on the contact holding its number: the four attributes, guarded on the row
 * still holding it. The contact shows the change, so its sequence number moves and it goes to the
 * end of the feed of changes (`updatedSince`); it raises no contact.updated (no CHANGED_AT): the
 * change is the number's, announced once as consent.changed.
 */
function consentCopyUpdate(tenantId: string, contactId: string, number: string, consent: Consent): TransactItem {
  const copy: Item = { ...consentAttributes(consent), ...changeIndexKeys(tenantId, new Date()) };
  const names = Object.keys(copy);
  return {
    Update: withRowSequenceBump({
      TableName: TABLE_NAME,
      Key: contactKey(tenantId, contactId),
      UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
      ConditionExpression: `${CONDITION.rowExists} AND #number = :number`,
      ExpressionAttributeNames: { ...Object.fromEntries(names.map((name) => [`#${name}`, name])), '#number': 'normalizedNumber' },
      ExpressionAttributeValues: { ...Object.fromEntries(names.map((name) => [`:${name}`, copy[name]])), ':number': number },
    }),
  };
}

/** True when the ledger refused the change for a later one on record (the rest of the reasons are a moved holder). */
export const consentChangeIsStale = (reasons: CancellationReason[]): boolean => failedCondition(reasons, 0) !== undefined;

/** Rounds of reading the holder again when the number moved between the read and the write. */
const ROUNDS = 4;

/**
 * Records a change on its own (a carrier's opt-out code, the consent backfill), with the holder's
 * copy. False when a later change is on record.
 */
export async function recordConsentChange(tenantId: string, number: string, change: ConsentChange): Promise<boolean> {
  for (let round = 0; round < ROUNDS; round += 1) {
    const reasons = await transactWrite(await consentChangeWrites(tenantId, number, change));
    if (!reasons) return true;
    if (consentChangeIsStale(reasons)) return false;
  }
  throw new TemporarilyUnavailableError('recordConsentChange: the number kept moving between contacts');
}

/**
 * The key-layout migration's step for a contact row: its number's ledger row copied onto it,
 * guarded on the row still holding the number, with the ledger checked unchanged. Rows written
 * before contacts carried copies have none; rows written before the ledger existed carry the
 * consent they stored then, which later changes (recorded in the ledger alone) left stale: both
 * are compared with the ledger, not trusted for having the attributes. Idempotent: a row whose
 * copy equals the ledger is left alone.
 */
export async function copyConsentOntoContact(row: Item): Promise<'copied' | 'alreadyCopied'> {
  const tenantId = row.tenantId as string;
  const number = row.normalizedNumber;
  if (typeof number !== 'string') return 'alreadyCopied';
  for (let round = 0; round < ROUNDS; round += 1) {
    const { consent, unchanged } = await ledgerSnapshot(tenantId, number);
    if (Object.entries(consentAttributes(consent)).every(([name, value]) => (row[name] ?? null) === value)) return 'alreadyCopied';
    const reasons = await transactWrite([consentCopyUpdate(tenantId, row.id as string, number, consent), unchanged]);
    if (!reasons) return 'copied';
    // The row is gone or holds another number (the write that moved it copied that number's consent).
    if (failedCondition(reasons, 0)) return 'alreadyCopied';
  }
  throw new Error(`copyConsentOntoContact: the consent of contact ${String(row.id)} kept changing; run the migration again`);
}
