import { createTestTable } from '../support/table';
import { contactRowsOf } from '../support/directory-rows';
import { roundsUntilTransactionsMeet } from '../support/engine-meters';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { DomainError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import { tenantPk } from '../../lambdas/shared/table/keys';
import { NamedTransaction } from '../../lambdas/shared/table/named-transaction';
import { consentOf, ledgerSnapshot } from '../../lambdas/contexts/consent/ledger';
import * as consentCopies from '../../lambdas/contexts/contacts/consent-copies';
import * as contacts from '../../lambdas/contexts/contacts/contacts';
import { getContact, listContacts } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import * as receiving from '../../lambdas/contexts/texting/receiving';
import { retryWhileBusy } from '../support/busy-retry';
import { suiteSize } from '../support/suite-sizes';

/**
 * The writes as their callers make them: on DynamoDB's limits (the limits engine) a write whose transaction kept
 * colliding is answered busy (503) having written nothing, and the client, or Twilio for a callback, sends it again.
 */
const busyRetried =
  <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
  (...args: A): Promise<R> =>
    retryWhileBusy(() => write(...args));
const recordConsentChange = busyRetried(consentCopies.recordConsentChange);
const createContact = busyRetried(contacts.createContact);
const deleteContact = busyRetried(contacts.deleteContact);
const ensureContactForNumber = busyRetried(contacts.ensureContactForNumber);
const updateContact = busyRetried(contacts.updateContact);
const receiveInboundMessage = busyRetried(receiving.receiveInboundMessage);

/**
 * A contact carries a copy of its number's consent (contacts/consent-copies.ts), so a page of
 * contacts is one read. The copy must stay the ledger's whatever races it: a STOP (or START)
 * arriving while the number moves between contacts (renumbered away and to, deleted and created
 * again, adopted). Each scenario runs rounds in a fresh organization and then checks every contact:
 * its copy is its number's ledger row, as the API shows it (GET /contacts/{id} and the list).
 * This file runs on DynamoDB Local and on the limits-faithful engine (conflicts, holds, throttles).
 */
/**
 * 2 rounds per scenario in `npm test` (on the limits engine, more until the racers' transactions met), many in the
 * bench (CONSENT_RACE_ROUNDS).
 */
const ROUNDS = suiteSize('CONSENT_RACE_ROUNDS', 2);
jest.setTimeout(120_000);
let serial = 0;
const freshNumber = () => `+1415666${String((serial += 1)).padStart(4, '0')}`;
let orgNumbers = 0;

beforeAll(createTestTable);

const stop = (at: Date) => ({ status: 'opted_out' as const, source: 'sms_keyword', at, note: 'Replied STOP' });
const start = (at: Date) => ({ status: 'opted_in' as const, source: 'sms_keyword', at, note: 'Replied START' });

/** The API's answers are success or a 4xx the API documents (a 409 for a number taken, a 404 for a contact gone). */
const tolerated = (err: unknown) => {
  if (err instanceof DomainError && err.status < 500) return undefined;
  throw err;
};

const contactRows = contactRowsOf;

/** Every contact shows exactly its number's ledger row, in its row and through the API. */
async function expectCopiesAreTheLedgers(tenantId: string): Promise<void> {
  const listed = new Map(
    (await listContacts(tenantId, { limit: 100, includeAutoCreated: true })).items.map((c) => [c.id, c]),
  );
  for (const row of await contactRows(tenantId)) {
    const ledger = await consentOf(tenantId, row.normalizedNumber as string);
    const expected = {
      consentStatus: ledger.status,
      consentSource: ledger.source,
      consentAt: ledger.at,
      consentNote: ledger.note,
    };
    expect({ number: row.normalizedNumber, ...expected }).toEqual({
      number: row.normalizedNumber,
      consentStatus: row.consentStatus,
      consentSource: row.consentSource,
      consentAt: row.consentAt,
      consentNote: row.consentNote,
    });
    expect(await getContact(tenantId, row.id as string)).toMatchObject(expected);
    expect(listed.get(row.id as string)).toMatchObject(expected);
  }
}

async function organization(): Promise<string> {
  return (
    await createTenant({ name: 'Consent Races', smsNumber: `+1415667${String((orgNumbers += 1)).padStart(4, '0')}` })
  ).id;
}

describe("a contact's copy of its number's consent under races", () => {
  it('stays the ledger when a STOP lands while the number is renumbered away from one contact and onto another', async () => {
    await roundsUntilTransactionsMeet(ROUNDS, async (round) => {
      // Prepare: A holds N, B holds M
      const tenantId = await organization();
      const [n, m, spare] = [freshNumber(), freshNumber(), freshNumber()];
      const a = (await createContact(tenantId, { displayName: 'A', phoneNumber: n })).contact;
      const b = (await createContact(tenantId, { displayName: 'B', phoneNumber: m })).contact;
      // Act: N replies STOP while A moves to a spare number and B moves to N
      await Promise.all([
        recordConsentChange(tenantId, n, stop(new Date(Date.UTC(2026, 10, 1, 0, round)))),
        updateContact(tenantId, a.id, { phoneNumber: spare }).catch(tolerated),
        updateContact(tenantId, b.id, { phoneNumber: n }).catch(tolerated),
      ]);
      // Assess
      await expectCopiesAreTheLedgers(tenantId);
      expect((await consentOf(tenantId, n)).status).toBe('opted_out');
    });
  });

  it('stays the ledger when a STOP and a START arrive while the holder is deleted and the number is created again', async () => {
    await roundsUntilTransactionsMeet(ROUNDS, async () => {
      // Prepare
      const tenantId = await organization();
      const n = freshNumber();
      const holder = (await createContact(tenantId, { displayName: 'Holder', phoneNumber: n })).contact;
      // Act: the later keyword wins in the ledger, whatever order they commit in
      await Promise.all([
        recordConsentChange(tenantId, n, start(new Date(Date.UTC(2026, 10, 1, 0, 2)))),
        recordConsentChange(tenantId, n, stop(new Date(Date.UTC(2026, 10, 1, 0, 1)))),
        deleteContact(tenantId, holder.id)
          .then(() => createContact(tenantId, { displayName: 'Again', phoneNumber: n }))
          .catch(tolerated),
      ]);
      // Assess
      await expectCopiesAreTheLedgers(tenantId);
      expect((await consentOf(tenantId, n)).status).toBe('opted_in');
    });
  });

  it('stays the ledger when an inbound STOP creates the contact of a new number while the same number is added by hand and adopted', async () => {
    await roundsUntilTransactionsMeet(ROUNDS, async () => {
      // Prepare
      const tenantId = await organization();
      const n = freshNumber();
      // Act: the text auto-creates the contact and records STOP; a person adds the number; a call sees it too
      await Promise.all([
        receiveInboundMessage(tenantId, {
          from: n,
          to: '+14155550000',
          body: 'STOP',
          messageSid: `SM${uuidv7().replace(/-/g, '')}`,
          receivedAt: new Date(),
        }),
        createContact(tenantId, { displayName: 'Added by hand', phoneNumber: n }).catch(tolerated),
        ensureContactForNumber(tenantId, n, 'auto_outbound'),
      ]);
      // Assess
      await expectCopiesAreTheLedgers(tenantId);
      expect((await contactRows(tenantId)).map((row) => row.consentStatus)).toEqual(['opted_out']);
    });
  });

  it('refuses a copy read before a change that carries the same time as the one recorded (the ledger takes it)', async () => {
    // Prepare: START recorded, then read for a copy
    const tenantId = await organization();
    const n = freshNumber();
    const at = new Date(Date.UTC(2026, 10, 2));
    await recordConsentChange(tenantId, n, start(at));
    const { unchanged } = await ledgerSnapshot(tenantId, n);
    // Act: a STOP with the same carrier time replaces it before the copy commits
    await recordConsentChange(tenantId, n, stop(at));
    const refusal = await new NamedTransaction()
      .add('probe', { Put: { TableName: TABLE_NAME, Item: { pk: tenantPk(tenantId), sk: `PROBE#${n}` } } })
      .add('consentUnchanged', unchanged)
      .write();
    // Assess
    expect((await consentOf(tenantId, n)).status).toBe('opted_out');
    expect(refusal?.failed('consentUnchanged')).toBeDefined();
  });
});
