import { ValidationError } from '../../shared/errors';
import type { ChangeRequest } from '../../shared/table/row-types';
import { ConsentSupersededError } from '../consent/errors';
import { readConsentRecord, type ConsentRecord } from '../consent/history';
import { consentOf, type ConsentChange, type ConsentEvidence } from '../consent/ledger';
import type { RecordConsentInput } from '../consent/requests/record-consent';
import type { ApiConsentSource } from '../consent/sources';
import { recordConsentChange } from '../contacts/consent-copies';
import { cancelScheduledWhileOptedOut } from './scheduled-changes';

/**
 * Consent gathered anywhere (`POST /consent`, the operator's `consent set`): an opt-out or opt-in the
 * person gave the organization by email, a form, a call or in person. It is written as every change
 * is (the ledger, its history and the holder's copy in one transaction: contacts/consent-copies.ts),
 * so it binds the send transaction's consent check from the next send, raises `consent.changed`, and
 * an opt-out cancels the number's scheduled texts as a STOP does. Here, and not in the consent
 * context, because an opt-out's effect on scheduled texts is texting's.
 */

/** How far ahead of our clock an evidence's `collectedAt` may be (the integrator's clock may run ahead). */
const CLOCK_SKEW_MS = 5 * 60_000;

const HOW: Record<ApiConsentSource, string> = {
  email: 'by email',
  web_form: 'through a web form',
  call: 'on a call',
  in_person: 'in person',
  other: 'by other means',
};

/**
 * The ledger change a request makes. Its time is the evidence's `collectedAt` (never later than now),
 * else the request's: the person's latest decision wins whoever reports it and whenever, so a backlog
 * of old opt-ins synced today cannot undo a STOP sent since.
 */
export function consentChangeOfRequest(input: RecordConsentInput, now: Date): ConsentChange {
  let evidence: ConsentEvidence | undefined;
  let at = now;
  if (input.evidence) {
    const collectedAt = new Date(input.evidence.collectedAt);
    if (collectedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
      throw new ValidationError('body.evidence.collectedAt: must not be in the future');
    }
    if (collectedAt < now) at = collectedAt;
    const { statement, where, reference } = input.evidence;
    evidence = { statement, where, collectedAt: collectedAt.toISOString(), ...(reference && { reference }) };
  }
  return {
    status: input.status,
    source: input.source,
    at,
    note: `${input.status === 'opted_out' ? 'Opted out' : 'Opted in'} ${HOW[input.source]}`,
    evidence,
  };
}

/**
 * Records the change, cancels what is scheduled to the number on an opt-out, and answers the number's
 * consent as it now stands. 409 `consent_superseded` when a later change is on record. `request` (the API
 * request, none for the operator's CLI) is named by the consent.changed and the message.canceled it raises.
 */
export async function recordConsent(
  tenantId: string,
  input: RecordConsentInput,
  now = new Date(),
  request: ChangeRequest | null = null,
): Promise<ConsentRecord> {
  const change = { ...consentChangeOfRequest(input, now), request };
  if (!(await recordConsentChange(tenantId, input.phoneNumber, change))) {
    const current = await consentOf(tenantId, input.phoneNumber);
    throw new ConsentSupersededError(current.status, current.at);
  }
  if (change.status === 'opted_out') await cancelScheduledWhileOptedOut(tenantId, input.phoneNumber, request);
  return readConsentRecord(tenantId, input.phoneNumber);
}
