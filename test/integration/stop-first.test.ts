import { createTestTable } from '../support/table';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { ensureContactForNumber } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { getMessage, listMessages } from '../../lambdas/contexts/texting/messages';

// The contact auto-create, real unless a test makes it fail.
jest.mock('../../lambdas/contexts/contacts/contacts', () => {
  const actual = jest.requireActual('../../lambdas/contexts/contacts/contacts');
  return { ...actual, ensureContactForNumber: jest.fn(actual.ensureContactForNumber) };
});

beforeAll(createTestTable);

describe('an inbound STOP', () => {
  it('lands in the consent ledger even when the auto-create of its contact fails on every retry', async () => {
    // Prepare: a new number's STOP, whose contact cannot be made
    const tenantId = (await createTenant({ name: 'Stop Org', smsNumber: '+16285559101' })).id;
    const from = '+14155557001';
    jest.mocked(ensureContactForNumber).mockRejectedValue(new Error('contact store unavailable'));
    const text = { from, to: '+16285559101', body: 'STOP', messageSid: 'SM' + 'a'.repeat(32), receivedAt: new Date() };
    // Act: the carrier's callback and its retries all fail on the contact
    const attempts = await Promise.all([1, 2, 3].map(() => receiveInboundMessage(tenantId, text).catch((e) => e)));
    // Assess
    expect(attempts).toEqual([1, 2, 3].map(() => expect.objectContaining({ message: 'contact store unavailable' })));
    expect((await consentOf(tenantId, from)).status).toBe('opted_out');
    const { items } = await listMessages(tenantId, from, { limit: 5 });
    expect(items.map((m) => m.body)).toEqual(['STOP']);

    // And once the contact can be made, a retry makes it, copying the opt-out, with the message stored once
    jest
      .mocked(ensureContactForNumber)
      .mockImplementation(jest.requireActual('../../lambdas/contexts/contacts/contacts').ensureContactForNumber);
    const retried = await receiveInboundMessage(tenantId, text);
    expect(retried).toMatchObject({ duplicate: true, contactId: expect.any(String) });
    expect((await getMessage(tenantId, items[0]!.id)).body).toBe('STOP');
  });
});
