import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { smsStatusCallback } from '../../lambdas/contexts/carrier/callbacks';
import { CarrierError, type Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { recordConsent } from '../../lambdas/contexts/texting/consent-records';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { cancelScheduledText } from '../../lambdas/contexts/texting/scheduled-changes';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { listDeliveriesOf, type Delivery } from '../../lambdas/contexts/webhooks/deliveries';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { startWebhookPipeline, type WebhookPipeline } from '../../local/webhook-pipeline';

/**
 * `request` of the text and consent events, from real writes through DynamoDB Local's stream and the local pipeline:
 * an event names the API request whose own write raised it (a send the carrier refused at once, a cancel, a
 * `POST /consent` and the cancels of its opt-out), and null for the carrier's and the system's changes, even on a row
 * an API request wrote before (a text's later status, a STOP after a `POST /consent`).
 */
const ORG = '+16285550177';
const newSid = () => `SM${randomBytes(16).toString('hex')}`;
let customers = 0;
const nextCustomer = () => `+1415556${String((customers += 1)).padStart(4, '0')}`;
const apiRequest = (idempotencyKey: string | null = `key-${randomUUID()}`) => ({ id: randomUUID(), idempotencyKey });

let tenantId: string;
let endpoint: WebhookEndpoint;
let pipeline: WebhookPipeline;
let server: http.Server;

const accepting: Carrier = { name: 'twilio', send: async () => ({ messageSid: newSid() }) };
const refusing: Carrier = {
  name: 'twilio',
  send: async () =>
    Promise.reject(
      new CarrierError('Twilio refused the send', {
        kind: 'refused',
        httpStatus: 400,
        providerCode: 21211,
        providerMessage: 'Invalid number',
      }),
    ),
};

type Body = { type: string; data: Record<string, unknown>; request: unknown };

/** Every event delivered so far, once the stream was read past a barrier text received after everything else. */
async function eventsAfterBarrier(): Promise<Body[]> {
  const barrier = await receiveInboundMessage(tenantId, {
    from: nextCustomer(),
    to: ORG,
    body: 'barrier',
    messageSid: newSid(),
    receivedAt: new Date(),
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const bodies = (await listDeliveriesOf(tenantId, endpoint.id, 200)).map((d: Delivery) => JSON.parse(d.body));
    if (bodies.some((b: Body) => (b.data.message as { id?: string } | undefined)?.id === barrier.message.id))
      return bodies;
    if (Date.now() > deadline) throw new Error('Timed out waiting for the barrier text to be routed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const about = (events: Body[], type: string, match: (data: Record<string, unknown>) => boolean) =>
  events.filter((e) => e.type === type && match(e.data));
const ofMessage = (id: string) => (data: Record<string, unknown>) => data.messageId === id;
const ofNumber = (number: string) => (data: Record<string, unknown>) =>
  (data.consent as { number: string }).number === number;

beforeAll(async () => {
  await createTestTable();
  server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tenantId = (await createTenant({ name: 'Event Requests Org', smsNumber: ORG })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  endpoint = await addWebhookEndpoint(
    tenantId,
    {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/all`,
      events: ['sms.received', 'message.delivered', 'message.failed', 'message.canceled', 'consent.changed'],
    },
    { allowInsecureTargets: true },
  );
  pipeline = await startWebhookPipeline({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: TABLE_NAME,
    allowInsecureTargets: true,
    backoffBaseMs: 50,
    attemptTimeoutMs: 2_000,
  });
});

afterAll(async () => {
  await pipeline?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('names the request whose own write raised the event, and null for the carrier and the system', async () => {
  // Prepare
  const [sendRefused, sendAccepted, schedule, cancel, optOut, optIn] = [
    apiRequest(),
    apiRequest(),
    apiRequest(),
    apiRequest(null),
    apiRequest(),
    apiRequest(),
  ];
  const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
  const [refusedTo, acceptedTo, canceledTo, optedOutTo, stoppedTo] = [1, 2, 3, 4, 5].map(nextCustomer);

  // Act: a send the carrier refused at once; a send accepted, then delivered by the carrier's callback
  const refusedId = await sendMessage(tenantId, { to: refusedTo, body: 'Hi' }, refusing, { request: sendRefused })
    .then(() => undefined)
    .catch((err: { details?: { messageId?: string } }) => err.details?.messageId);
  const accepted = (await sendMessage(tenantId, { to: acceptedTo, body: 'Hi' }, accepting, { request: sendAccepted }))
    .message;
  await smsStatusCallback.ingest(
    {
      messageSid: accepted.messageSid,
      status: 'delivered',
      from: ORG,
      to: acceptedTo,
      errorCode: undefined,
      errorMessage: undefined,
      messageId: accepted.id,
    },
    { tenantId, orgNumbers: new Set([ORG]), via: 'number' },
    new Date(),
  );
  // a scheduled text canceled by the API (a request without an Idempotency-Key)
  const toCancel = (await sendMessage(tenantId, { to: canceledTo, body: 'Later', sendAt: inAnHour }, accepting))
    .message;
  await cancelScheduledText(tenantId, toCancel.id, 'api', cancel);
  // an opt-out through POST /consent, which cancels the number's scheduled text
  const optedOutText = (
    await sendMessage(tenantId, { to: optedOutTo, body: 'Later', sendAt: inAnHour }, accepting, { request: schedule })
  ).message;
  await recordConsent(tenantId, { phoneNumber: optedOutTo, status: 'opted_out', source: 'email' }, new Date(), optOut);
  // an opt-in through POST /consent, then the number's STOP: the ledger row the request wrote is changed by the carrier
  const evidence = { statement: 'Yes', where: 'web form', collectedAt: new Date(Date.now() - 60_000).toISOString() };
  await recordConsent(
    tenantId,
    { phoneNumber: stoppedTo, status: 'opted_in', source: 'web_form', evidence },
    new Date(),
    optIn,
  );
  await receiveInboundMessage(tenantId, {
    from: stoppedTo,
    to: ORG,
    body: 'STOP',
    messageSid: newSid(),
    receivedAt: new Date(),
  });
  const events = await eventsAfterBarrier();

  // Assess
  expect(about(events, 'message.failed', ofMessage(refusedId!)).map((e) => e.request)).toEqual([sendRefused]);
  expect(about(events, 'message.delivered', ofMessage(accepted.id)).map((e) => e.request)).toEqual([null]);
  expect(about(events, 'message.canceled', ofMessage(toCancel.id)).map((e) => e.request)).toEqual([
    { id: cancel.id, idempotencyKey: null },
  ]);
  expect(about(events, 'message.canceled', ofMessage(optedOutText.id)).map((e) => e.request)).toEqual([optOut]);
  expect(about(events, 'consent.changed', ofNumber(optedOutTo)).map((e) => e.request)).toEqual([optOut]);
  const stopped = about(events, 'consent.changed', ofNumber(stoppedTo));
  expect(stopped.map((e) => [(e.data.consent as { status: string }).status, e.request])).toEqual(
    expect.arrayContaining([
      ['opted_in', optIn],
      ['opted_out', null],
    ]),
  );
  expect(stopped).toHaveLength(2);
  const stopText = about(events, 'sms.received', (data) => (data.message as { body: string }).body === 'STOP');
  expect(stopText.map((e) => e.request)).toEqual([null]);
});
