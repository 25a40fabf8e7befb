import { randomBytes } from 'node:crypto';
import { createTestTable } from '../support/table';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { LoopbackCarrier } from '../../lambdas/contexts/carrier/loopback';
import { ensureContactForNumber, listContacts } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { RecipientOptedOutError } from '../../lambdas/contexts/texting/errors';
import { listMessages } from '../../lambdas/contexts/texting/messages';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { sendMessage } from '../../lambdas/contexts/texting/sending';

// The contact auto-create: the real one unless a test makes the contact store fail.
jest.mock('../../lambdas/contexts/contacts/contacts', () => {
  const actual = jest.requireActual('../../lambdas/contexts/contacts/contacts');
  return { ...actual, ensureContactForNumber: jest.fn(actual.ensureContactForNumber) };
});
const realEnsureContact = jest.requireActual('../../lambdas/contexts/contacts/contacts').ensureContactForNumber;

beforeAll(createTestTable);
afterEach(() => jest.mocked(ensureContactForNumber).mockImplementation(realEnsureContact));

const ORG_NUMBER = '+16285559101';
const newSid = () => `SM${randomBytes(16).toString('hex')}`;

describe('an inbound STOP', () => {
  it('lands in the consent ledger, and sends to the number are refused 409, when its contact cannot be made on any retry', async () => {
    // Prepare: a new number's STOP, whose contact the store refuses every time
    const tenantId = (await createTenant({ name: 'Stop First', smsNumber: ORG_NUMBER })).id;
    const from = '+14155557001';
    jest.mocked(ensureContactForNumber).mockRejectedValue(new Error('contact store unavailable'));
    const text = { from, to: ORG_NUMBER, body: 'STOP', messageSid: newSid(), receivedAt: new Date() };

    // Act: the carrier's callback and each of its retries fail on the contact
    const attempts = [];
    for (let retry = 0; retry < 3; retry += 1)
      attempts.push(await receiveInboundMessage(tenantId, text).catch((e) => e));
    const send = sendMessage(tenantId, { to: from, body: 'Still there?' }, new LoopbackCarrier({ statusDelayMs: 0 }));

    // Assess: every attempt failed, yet the opt-out is on record and the send is refused
    expect(attempts.map((a) => (a as Error).message)).toEqual(Array(3).fill('contact store unavailable'));
    expect(await consentOf(tenantId, from)).toMatchObject({ status: 'opted_out', source: 'sms_keyword' });
    await expect(send).rejects.toBeInstanceOf(RecipientOptedOutError);
    await expect(send).rejects.toMatchObject({ status: 409 });
    expect((await listMessages(tenantId, from, { limit: 5 })).items.map((m) => m.body)).toEqual(['STOP']);
    expect((await listContacts(tenantId, { limit: 10, includeAutoCreated: true })).items).toEqual([]);
  });

  it('gets its contact on the retry after the store recovers, the message stored once and the contact showing the opt-out', async () => {
    // Prepare: a STOP whose first delivery could not make the contact
    const tenantId = (await createTenant({ name: 'Stop First Again', smsNumber: '+16285559102' })).id;
    const from = '+14155557002';
    const text = { from, to: '+16285559102', body: 'STOP', messageSid: newSid(), receivedAt: new Date() };
    jest.mocked(ensureContactForNumber).mockRejectedValueOnce(new Error('contact store unavailable'));
    await expect(receiveInboundMessage(tenantId, text)).rejects.toThrow('contact store unavailable');

    // Act: the carrier retries
    const retried = await receiveInboundMessage(tenantId, text);

    // Assess
    expect(retried).toMatchObject({ duplicate: true, contactId: expect.any(String), consent: { status: 'opted_out' } });
    expect((await listMessages(tenantId, from, { limit: 5 })).items.map((m) => m.body)).toEqual(['STOP']);
    const { items } = await listContacts(tenantId, { limit: 10, includeAutoCreated: true });
    expect(items).toEqual([expect.objectContaining({ id: retried.contactId, consentStatus: 'opted_out' })]);
  });
});
