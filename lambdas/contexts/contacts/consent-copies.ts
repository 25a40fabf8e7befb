import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, str, type TransactItem } from '../../shared/table/dynamo';
import { NamedTransaction, type NamedItems, type Refusal } from '../../shared/table/named-transaction';
import { ROW_SEQUENCE, rowSequenceOf } from '../../shared/table/row-sequence';
import { changeRequestParts } from '../../shared/table/row-types';
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
  const history = consentHistoryPut(tenantId, number, change);
  if (!claim) {
    return {
      consentLedger: consentChangeUpdate(tenantId, number, change),
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
  const holderId = claim.contactId as string;
  // The holder as it stands, so the event can name its external id and the version the copy gives it.
  const { Item: row } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, holderId), ConsistentRead: true }),
  );
  const version = rowSequenceOf(row) + 1;
  const holder = { contactId: holderId, externalId: str(row?.externalId), version };
  return {
    consentLedger: consentChangeUpdate(tenantId, number, change, new Date(), holder),
    consentHistory: history,
    consentCopy: consentCopyUpdate(tenantId, holderId, number, consentOfChange(change), version),
    numberHolder: {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: numberClaimKey(tenantId, number),
        ConditionExpression: 'contactId = :holder',
        ExpressionAttributeValues: { ':holder': holderId },
      },
    },
  };
}

/**
 * A consent's copy on the contact holding its number: the four attributes, guarded on the row
 * still holding it and still at the version read, which the copy moves to `version` (a write of the contact
 * in between cancels the change, which reads the holder again). The contact shows the change, so it goes to
 * the end of the feed of changes (`updatedSince`); it raises no contact.updated (no CHANGED_AT): the
 * change is the number's, announced once as consent.changed, which names the contact and this version.
 * The carrier made it, so the row names no request.
 */
function consentCopyUpdate(
  tenantId: string,
  contactId: string,
  number: string,
  consent: Consent,
  version: number,
): TransactItem {
  const set = {
    ...consentAttributes(consent),
    ...changeIndexKeys(tenantId, new Date()),
    [ROW_SEQUENCE]: version,
  };
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: contactKey(tenantId, contactId),
      ...updateExpression(
        { set, remove: changeRequestParts(null).remove },
        {
          expression: `${CONDITION.rowExists} AND #holdsNumber = :heldNumber AND ${
            version > 1 ? '#versionAsRead = :versionAsRead' : 'attribute_not_exists(#versionAsRead)'
          }`,
          names: { '#holdsNumber': 'normalizedNumber', '#versionAsRead': ROW_SEQUENCE },
          values: { ':heldNumber': number, ...(version > 1 && { ':versionAsRead': version - 1 }) },
        },
      ),
    },
  };
}

/** True when the ledger refused the change for a later one on record (the rest of the reasons are a moved holder). */
export const consentChangeIsStale = <N extends string>(refusal: Refusal<N | ConsentChangePart>): boolean =>
  refusal.failed('consentLedger') !== undefined;

/** Rounds of reading the holder again when the number moved between the read and the write. */
const HOLDER_ROUNDS = {
  what: 'record a consent change: the number kept moving between contacts',
  rounds: 4,
  site: 'contacts.consentCopy',
};

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
