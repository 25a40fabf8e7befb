import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { recordConsentChange } from '../../lambdas/contexts/contacts/consent-copies';
import { contactKey } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { consentBackfill } from '../../local/admin/commands/consent';

const context = { stateDir: '.local', runtime: undefined, emit: () => undefined, signal: new AbortController().signal };

/** A contact row as the service stored it before the consent ledger: consent on the contact. */
async function legacyContact(tenantId: string, id: string, number: string, consent: Record<string, unknown>): Promise<void> {
  await dynamo.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: {
        ...contactKey(tenantId, id),
        type: 'contact',
        id,
        tenantId,
        displayName: 'Legacy',
        phoneNumber: number,
        normalizedNumber: number,
        updatedAt: '2026-10-01T00:00:00.000Z',
        ...consent,
      },
    }),
  );
}

beforeAll(createTestTable);

describe('npm run admin -- consent backfill', () => {
  it("copies consent recorded on contacts into each number's ledger row, idempotently, never over a newer change", async () => {
    // Prepare: a STOP and a START recorded the old way, a number whose ledger already has a newer START, and an unknown one
    const tenantId = (await createTenant({ name: 'Legacy org', smsNumber: '+16285559901' })).id;
    const at = '2026-10-02T10:00:00.000Z';
    await legacyContact(tenantId, '0199a000-0000-7000-8000-00000000b001', '+14155557001', { consentStatus: 'opted_out', consentSource: 'sms_keyword', consentAt: at, consentNote: 'Replied STOP' });
    await legacyContact(tenantId, '0199a000-0000-7000-8000-00000000b002', '+14155557002', { consentStatus: 'opted_in', consentSource: 'sms_keyword', consentAt: at, consentNote: 'Replied START' });
    await legacyContact(tenantId, '0199a000-0000-7000-8000-00000000b003', '+14155557003', { consentStatus: 'opted_out', consentAt: at });
    await legacyContact(tenantId, '0199a000-0000-7000-8000-00000000b004', '+14155557004', { consentStatus: 'unknown' });
    await recordConsentChange(tenantId, '+14155557003', { status: 'opted_in', source: 'sms_keyword', at: new Date('2026-11-01T00:00:00.000Z'), note: 'Replied START' });

    // Act
    const first = (await consentBackfill.run(consentBackfill.parse({ values: {}, positionals: [] }), context)) as Record<string, number>;
    const second = (await consentBackfill.run(consentBackfill.parse({ values: {}, positionals: [] }), context)) as Record<string, number>;

    // Assess
    expect(await consentOf(tenantId, '+14155557001')).toEqual({ status: 'opted_out', source: 'sms_keyword', at, note: 'Replied STOP' });
    expect((await consentOf(tenantId, '+14155557002')).status).toBe('opted_in');
    expect((await consentOf(tenantId, '+14155557003')).status).toBe('opted_in'); // the newer START stands
    expect((await consentOf(tenantId, '+14155557004')).status).toBe('unknown');
    expect(first).toMatchObject({ contactsWithConsent: 3, recorded: 2, newerOnRecord: 1 });
    // A replay writes the same change again (equal times) and never anything older.
    expect(second).toMatchObject({ contactsWithConsent: 3, newerOnRecord: 1 });
  });
});
