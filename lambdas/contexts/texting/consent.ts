import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { CONDITION, isConditionalCheckFailed } from '../../shared/table/dynamo';
import { contactKey, getContact, numberClaimKey } from '../contacts/contacts';
import type { Contact } from '../contacts/schemas';

/**
 * Messaging consent. It lives on the contact of a number (`consentStatus`, `consentSource`,
 * `consentAt`, `consentNote`); an inbound text that is exactly a keyword changes it, and a send
 * to an opted-out number is refused.
 */
export type ConsentStatus = Contact['consentStatus'];

/** The carrier-standard keywords (CTIA / Twilio Advanced Opt-Out defaults). */
const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const OPT_IN = new Set(['START', 'UNSTOP', 'YES']);

export const CONSENT_SOURCE_KEYWORD = 'sms_keyword';

export type ConsentKeyword = { keyword: string; status: Extract<ConsentStatus, 'opted_in' | 'opted_out'> };

/** The keyword an inbound body is, if it is one: the whole trimmed body, case-insensitive. */
export function consentKeywordOf(body: string): ConsentKeyword | null {
  const keyword = body.trim().toUpperCase();
  if (OPT_OUT.has(keyword)) return { keyword, status: 'opted_out' };
  if (OPT_IN.has(keyword)) return { keyword, status: 'opted_in' };
  return null;
}

/**
 * Records a keyword on the contact. Guarded on `consentAt`, so a keyword that arrives late (the
 * carrier retried an older text) never overrides a newer one, and replaying one is harmless.
 * Returns false when nothing changed (newer consent on record, or the contact is gone).
 */
export async function applyConsentKeyword(tenantId: string, contactId: string, change: ConsentKeyword, at: Date): Promise<boolean> {
  const when = at.toISOString();
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: contactKey(tenantId, contactId),
        UpdateExpression: 'SET #status = :status, #source = :source, #at = :at, #note = :note, #updatedAt = :now',
        ConditionExpression: `${CONDITION.rowExists} AND (attribute_not_exists(#at) OR attribute_type(#at, :nullType) OR #at <= :at)`,
        ExpressionAttributeNames: {
          '#status': 'consentStatus',
          '#source': 'consentSource',
          '#at': 'consentAt',
          '#note': 'consentNote',
          '#updatedAt': 'updatedAt',
        },
        ExpressionAttributeValues: {
          ':status': change.status,
          ':source': CONSENT_SOURCE_KEYWORD,
          ':at': when,
          ':note': `Replied ${change.keyword}`,
          ':now': new Date().toISOString(),
          ':nullType': 'NULL',
        },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

/** The consent of whichever contact holds the number; `unknown` when no contact does. */
export async function consentOfNumber(tenantId: string, number: string): Promise<ConsentStatus> {
  const { Item: claim } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number) }));
  if (!claim) return 'unknown';
  try {
    return (await getContact(tenantId, claim.contactId as string)).consentStatus;
  } catch (err) {
    if (err instanceof NotFoundError) return 'unknown'; // deleted between the two reads
    throw err;
  }
}
