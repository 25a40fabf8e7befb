import { moneyLedgerOf, unsettledMessageIds } from '../support/ledger';
import { createTestTable } from '../support/table';
import { lambdaContext } from '../support/api-event';
import { callbackHandler } from '../../lambdas/handlers/carrier/callback-handler';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import type { Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { smsInboundCallback, smsStatusCallback, type CallbackKind } from '../../lambdas/contexts/carrier/callbacks';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { RecipientOptedOutError } from '../../lambdas/contexts/texting/errors';
import { listMessages } from '../../lambdas/contexts/texting/messages';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { sendMessage as sendText } from '../../lambdas/contexts/texting/sending';
import { listThreads } from '../../lambdas/contexts/texting/threads';
import { sid, smsInbound, smsStatus, type Form } from '../fixtures/twilio/callbacks';
import { signedCallbackEvent, TEST_PUBLIC_BASE_URL, TEST_TOKEN } from '../fixtures/twilio/events';

/** The first page of threads (these tests keep well under 100). */
const firstThreads = async (tenantId: string) => (await listThreads(tenantId, { limit: 100 })).items;

const ORG = '+14155550000';
let tenantId: string;
let n = 700;
let customers = 0;
const nextSid = () => sid('SM', (n += 1));
const nextCustomer = () => `+1415555${String((customers += 1)).padStart(4, '0')}`;
const received = new Date('2026-11-21T10:00:00.000Z');

function poster<P>(route: CarrierRouteSpec, kind: CallbackKind<P>) {
  const handler = callbackHandler(route, kind, {
    config: { authToken: TEST_TOKEN, publicBaseUrl: TEST_PUBLIC_BASE_URL },
    now: () => received,
  });
  return (
    form: Form,
    tamper?: (event: ReturnType<typeof signedCallbackEvent>) => void,
    query: Record<string, string> = {},
  ) => {
    const event = signedCallbackEvent(route, form, query);
    tamper?.(event);
    return handler(event, lambdaContext);
  };
}
const postInbound = poster(carrierRoutes.twilioSmsInbound, smsInboundCallback);
const postStatus = poster(carrierRoutes.twilioSmsStatus, smsStatusCallback);
const consentOfNumber = async (tenant: string, number: string) => (await consentOf(tenant, number)).status;
const sendMessage = async (tenant: string, input: { to: string; body: string }, carrier: Carrier, now?: Date) =>
  (await sendText(tenant, input, carrier, { now })).message;
const conversation = async (counterpart: string) => (await listMessages(tenantId, counterpart, { limit: 50 })).items;
/** A carrier that accepts every text, counting them. */
const countingCarrier = () => {
  const carrier = {
    name: 'twilio' as const,
    calls: 0,
    send: async () => ({ messageSid: sid('SM', 100_000 + (carrier.calls += 1)) }),
  };
  return carrier;
};
/** A carrier that took the text but whose answer never arrived. */
const lostAnswer: Carrier = {
  name: 'twilio',
  send: async () => Promise.reject(new CarrierError('Twilio did not answer in time', { kind: 'unknown' })),
};

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Texts Org', smsNumber: ORG })).id;
});

describe('an inbound text callback', () => {
  it('stores the text once, as received and unread, however often Twilio delivers it', async () => {
    // Prepare
    const customer = nextCustomer();
    const form = smsInbound({ messageSid: nextSid(), from: customer, to: ORG, body: 'Can we move to 3pm?' });
    // Act
    const first = await postInbound(form);
    const retry = await postInbound(form);
    // Assess
    expect(first).toMatchObject({ statusCode: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response/>' });
    expect(retry.statusCode).toBe(200);
    expect(await conversation(customer)).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        fromNumber: customer,
        toNumber: ORG,
        body: 'Can we move to 3pm?',
        status: 'received',
        isRead: false,
        messageSid: form.MessageSid,
        createdAt: received.toISOString(),
      }),
    ]);
    expect((await firstThreads(tenantId)).find((t) => t.counterpartNumber === customer)).toMatchObject({
      messageCount: 1,
      hasUnread: true,
    });
  });

  it("records a STOP keyword in the consent ledger of the sender's number, and the next send is refused", async () => {
    // Prepare
    const customer = nextCustomer();
    const carrier = countingCarrier();
    // Act
    await postInbound(smsInbound({ messageSid: nextSid(), from: customer, to: ORG, body: ' stop ' }));
    // Assess
    expect(await consentOf(tenantId, customer)).toEqual({
      status: 'opted_out',
      source: 'sms_keyword',
      at: received.toISOString(),
      note: 'Replied STOP',
    });
    await expect(sendMessage(tenantId, { to: customer, body: 'Still there?' }, carrier)).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
    expect(carrier.calls).toBe(0);
  });

  it('writes nothing when unsigned, signed for another body, or sent to a number no organization registered', async () => {
    // Prepare
    const customer = nextCustomer();
    const form = smsInbound({ messageSid: nextSid(), from: customer, to: ORG, body: 'STOP' });
    // Act
    const unsigned = await postInbound(form, (event) => delete event.headers['X-Twilio-Signature']);
    const forged = await postInbound(form, (event) => (event.body = event.body!.replace('Body=STOP', 'Body=START')));
    const elsewhere = await postInbound(
      smsInbound({ messageSid: nextSid(), from: customer, to: '+19995550000', body: 'STOP' }),
    );
    // Assess
    expect([unsigned.statusCode, forged.statusCode, elsewhere.statusCode]).toEqual([403, 403, 200]);
    expect(await conversation(customer)).toEqual([]);
    expect(await consentOfNumber(tenantId, customer)).toBe('unknown');
  });

  it('accepts and ignores a sender that is no phone number (an alphanumeric id)', async () => {
    // Act
    const result = await postInbound(
      smsInbound({ messageSid: nextSid(), from: 'ACMEBANK', to: ORG, body: 'Your code is 1234' }),
    );
    // Assess
    expect(result.statusCode).toBe(200);
  });
});

describe('a message status callback', () => {
  const sendOne = async (to: string) => {
    const messageSid = nextSid();
    const carrier: Carrier = { name: 'twilio', send: async () => ({ messageSid }) };
    const message = await sendMessage(tenantId, { to, body: 'Your table is ready' }, carrier, received);
    return { message, messageSid };
  };

  it('moves the message and its thread forward, never backwards', async () => {
    // Prepare
    const customer = nextCustomer();
    const { messageSid } = await sendOne(customer);
    const status = (s: string) => smsStatus({ messageSid, status: s, from: ORG, to: customer });
    // Act
    for (const s of ['queued', 'sent', 'delivered', 'sent']) expect((await postStatus(status(s))).statusCode).toBe(200);
    // Assess
    expect((await conversation(customer))[0]).toMatchObject({ status: 'delivered', messageSid });
    expect((await firstThreads(tenantId)).find((t) => t.counterpartNumber === customer)).toMatchObject({
      lastStatus: 'delivered',
    });
  });

  it('marks an undelivered message failed and refunds it once, however often Twilio retries the callback', async () => {
    // Prepare
    const customer = nextCustomer();
    const { messageSid } = await sendOne(customer);
    const before = await moneyLedgerOf(tenantId);
    const form = smsStatus({ messageSid, status: 'undelivered', from: ORG, to: customer, errorCode: '30003' });
    // Act
    await postStatus(form);
    await postStatus(form);
    // Assess
    expect((await conversation(customer))[0]).toMatchObject({ status: 'failed' });
    const after = await moneyLedgerOf(tenantId);
    expect(after.spendCents).toBe(before.spendCents - 1);
    expect(after.spendCents).toBe(after.owedCents);
  });

  it('answers 200 for a sid the service never sent', async () => {
    // Act
    const result = await postStatus(
      smsStatus({ messageSid: nextSid(), status: 'delivered', from: ORG, to: nextCustomer() }),
    );
    // Assess
    expect(result).toEqual({ statusCode: 200, headers: {}, body: '' });
  });

  it('settles a text whose send answer was lost, by the message id its StatusCallback URL carries', async () => {
    // Prepare: the carrier took the text but its answer never arrived
    const customer = nextCustomer();
    const message = await sendMessage(tenantId, { to: customer, body: 'Lost answer' }, lostAnswer, received);
    const messageSid = nextSid();
    // Act: the callback URL carries ?messageId=<id>, signed with it
    const result = await postStatus(
      smsStatus({ messageSid, status: 'delivered', from: ORG, to: customer }),
      undefined,
      { messageId: message.id },
    );
    // Assess
    expect(result.statusCode).toBe(200);
    expect((await conversation(customer))[0]).toMatchObject({ id: message.id, status: 'delivered', messageSid });
    expect(await unsettledMessageIds(tenantId)).not.toContain(message.id); // settled: the sweep will not refund a delivered text
    const ledger = await moneyLedgerOf(tenantId);
    expect(ledger.spendCents).toBe(ledger.owedCents);
  });

  it('refuses (403) a callback whose message id was changed after Twilio signed the URL, changing no message', async () => {
    // Prepare: two texts whose answers were lost
    const customer = nextCustomer();
    const signedFor = await sendMessage(tenantId, { to: customer, body: 'Signed for' }, lostAnswer, received);
    const other = await sendMessage(tenantId, { to: customer, body: 'Other' }, lostAnswer, received);
    const swapId = (event: ReturnType<typeof signedCallbackEvent>) => {
      event.queryStringParameters = { messageId: other.id };
      event.multiValueQueryStringParameters = { messageId: [other.id] };
    };
    // Act
    const result = await postStatus(
      smsStatus({ messageSid: nextSid(), status: 'failed', from: ORG, to: customer }),
      swapId,
      { messageId: signedFor.id },
    );
    // Assess
    expect(result.statusCode).toBe(403);
    expect((await conversation(customer)).map((m) => [m.status, m.messageSid])).toEqual([
      ['queued', ''],
      ['queued', ''],
    ]);
  });

  it('records an opt-out the carrier reports (21610) in the ledger, refunds the text, and refuses the next send (409)', async () => {
    // Prepare
    const customer = nextCustomer();
    const { messageSid } = await sendOne(customer);
    const spend = await spendOf(tenantId);
    const carrier = countingCarrier();
    // Act
    await postStatus(smsStatus({ messageSid, status: 'undelivered', from: ORG, to: customer, errorCode: '21610' }));
    // Assess
    expect(await consentOf(tenantId, customer)).toMatchObject({
      status: 'opted_out',
      source: 'carrier_opt_out',
      at: received.toISOString(),
    });
    expect((await conversation(customer))[0]).toMatchObject({ status: 'failed' });
    expect(await spendOf(tenantId)).toBe(spend - 1);
    const refusal = await sendMessage(tenantId, { to: customer, body: 'Again?' }, carrier).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(RecipientOptedOutError);
    expect(refusal).toMatchObject({ status: 409, code: 'recipient_opted_out' });
    expect(carrier.calls).toBe(0);
    const ledger = await moneyLedgerOf(tenantId);
    expect(ledger.spendCents).toBe(ledger.owedCents);
  });
});
