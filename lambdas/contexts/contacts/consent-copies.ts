import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, type TransactItem } from '../../shared/table/dynamo';
import { NamedTransaction, type NamedItems, type Refusal } from '../../shared/table/named-transaction';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { updateExpression } from '../../shared/table/update-expression';
import {
  consentAttributes,
  consentChangeUpdate,
  consentOfChange,
  type Consent,
  type ConsentChange,
} from '../consent/ledger';
import { consentHistoryPut } from '../consent/history';
import { changeIndexKeys } from './contact-changes';
import { contactKey, numberClaimKey } from './contact-rows';

/**
 * A consent change as it is written: the number's ledger row (consent/ledger.ts), and the copy on
 * the contact that holds the number, in one transaction. The holder is read from the number's
 * claim and the transaction checks the claim still names it (or that nobody holds the number), so
 * a change racing a number moving between contacts (a renumber, a delete, a create) either lands
 * before the move, whose own write then copies the new value, or fails and is written again with
 * the new holder. The ledger's condition (a later change on record) is `consentLedger`; the change's
 * row of the number's history (consent/history.ts) rides along.
 */

/**
 * The parts of a consent change's transaction: the ledger, its history row, the holder's copy, the check on who holds
 * the number.
 */
export type ConsentChangePart = 'consentLedger' | 'consentHistory' | 'consentCopy' | 'numberHolder';

export async function consentChangeWrites(
  tenantId: string,
  number: string,
  change: ConsentChange,
): Promise<NamedItems<ConsentChangePart>> {
  const { Item: claim } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }),
  );
  const ledger = consentChangeUpdate(tenantId, number, change);
  const history = consentHistoryPut(tenantId, number, change);
  if (!claim) {
    return {
      consentLedger: ledger,
      consentHistory: history,
      numberHolder: {
        ConditionCheck: {
          TableName: TABLE_NAME,
          Key: numberClaimKey(tenantId, number),
          ConditionExpression: CONDITION.rowIsNew,
        },
      },
    };
  }
  return {
    consentLedger: ledger,
    consentHistory: history,
    consentCopy: consentCopyUpdate(tenantId, claim.contactId as string, number, consentOfChange(change)),
    numberHolder: {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: numberClaimKey(tenantId, number),
        ConditionExpression: 'contactId = :holder',
        ExpressionAttributeValues: { ':holder': claim.contactId },
      },
    },
  };
}

/**
 * A consent's copy on the contact holding its number: the four attributes, guarded on the row
 * still holding it. The contact shows the change, so its sequence number moves and it goes to the
 * end of the feed of changes (`updatedSince`); it raises no contact.updated (no CHANGED_AT): the
 * change is the number's, announced once as consent.changed.
 */
function consentCopyUpdate(tenantId: string, contactId: string, number: string, consent: Consent): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: contactKey(tenantId, contactId),
      ...updateExpression(
        withRowSequenceBump({ set: { ...consentAttributes(consent), ...changeIndexKeys(tenantId, new Date()) } }),
        {
          expression: `${CONDITION.rowExists} AND #holdsNumber = :heldNumber`,
          names: { '#holdsNumber': 'normalizedNumber' },
          values: { ':heldNumber': number },
        },
      ),
    },
  };
}

/** True when the ledger refused the change for a later one on record (the rest of the reasons are a moved holder). */
export const consentChangeIsStale = <N extends string>(refusal: Refusal<N | ConsentChangePart>): boolean =>
  refusal.failed('consentLedger') !== undefined;

/** Rounds of reading the holder again when the number moved between the read and the write. */
const HOLDER_ROUNDS = { what: 'record a consent change: the number kept moving between contacts', rounds: 4 };

/**
 * Records a change on its own (a carrier's opt-out code), with the holder's
 * copy. False when a later change is on record.
 */
export async function recordConsentChange(tenantId: string, number: string, change: ConsentChange): Promise<boolean> {
  return optimisticRounds(HOLDER_ROUNDS, async () => {
    const refusal = await new NamedTransaction<ConsentChangePart>()
      .addAll(await consentChangeWrites(tenantId, number, change))
      .write();
    if (!refusal) return true;
    return consentChangeIsStale(refusal) ? false : LOST_RACE;
  });
}
