import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { moneyLedgerOf } from '../support/ledger';
import { createTestTable } from '../support/table';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { smsStatusCallback } from '../../lambdas/contexts/carrier/callbacks';
import { CarrierError, type Carrier, type CarrierErrorDetails } from '../../lambdas/contexts/texting/carrier-port';
import { getMessage } from '../../lambdas/contexts/texting/messages';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { listDeliveriesOf, type Delivery } from '../../lambdas/contexts/webhooks/deliveries';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { startWebhookPipeline, type WebhookPipeline } from '../../local/webhook-pipeline';

/**
 * message.delivered and message.failed from real writes, through DynamoDB Local's stream and the
 * local pipeline (the router's and sender's code): exactly one final event per text whatever
 * order and however often the carrier's callbacks arrive, when the send's outcome was unknown,
 * when the send was refused, and when the settlement sweep fails a text nobody reported. Counted
 * on the delivery rows the router writes (one per event and endpoint), after a barrier: an inbound
 * text written after everything else, whose own delivery proves the stream was read past it all.
 */
const ORG = '+16285550101';
const received = (offsetMs: number) => new Date(Date.parse('2026-11-26T10:00:00.000Z') + offsetMs);
const newSid = () => `SM${randomBytes(16).toString('hex')}`;
let customers = 0;
const nextCustomer = () => `+1415555${String((customers += 1)).padStart(4, '0')}`;

let tenantId: string;
let texts: WebhookEndpoint;
let smsOnly: WebhookEndpoint;
let pipeline: WebhookPipeline;
let server: http.Server;

/** A carrier that accepts every text with a fresh sid. */
const accepting: Carrier = { name: 'twilio', send: async () => ({ messageSid: newSid() }) };
const failing = (details: CarrierErrorDetails): Carrier => ({
  name: 'twilio',
  send: async () => Promise.reject(new CarrierError('Twilio failed the send', details)),
});

const send = async (carrier: Carrier, to = nextCustomer()) => {
  try {
    return (await sendMessage(tenantId, { to, body: 'Your table is ready' }, carrier)).message;
  } catch (err) {
    // A refused send answers an error; the text is stored (failed) all the same.
    const messageId = (err as { details?: { messageId?: string } }).details?.messageId;
    if (!messageId) throw err;
    return getMessage(tenantId, messageId);
  }
};

/** A status callback as Twilio posts it, through the very ingestion the callback route runs. */
const callback = (
  message: { id: string; messageSid: string; toNumber: string },
  status: string,
  at: number,
  errorCode?: string,
) =>
  smsStatusCallback.ingest(
    {
      messageSid: message.messageSid || newSid(),
      status,
      from: ORG,
      to: message.toNumber,
      errorCode,
      errorMessage: undefined,
      messageId: message.id,
    },
    { tenantId, orgNumbers: new Set([ORG]), via: 'number' },
    received(at),
  );

const eventsAbout = (deliveries: Delivery[], messageId: string) =>
  deliveries.filter((d) => d.event.startsWith('message.') && JSON.parse(d.body).data.messageId === messageId);

/** Every delivery of both endpoints once the stream has been read past everything written so far. */
async function deliveriesAfterBarrier(): Promise<{ texts: Delivery[]; smsOnly: Delivery[] }> {
  const barrier = await receiveInboundMessage(tenantId, {
    from: nextCustomer(),
    to: ORG,
    body: 'barrier',
    messageSid: newSid(),
    receivedAt: new Date(),
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const smsOnlyRows = await listDeliveriesOf(tenantId, smsOnly.id, 100);
    if (smsOnlyRows.some((d) => JSON.parse(d.body).data.message?.id === barrier.message.id)) {
      return { texts: await listDeliveriesOf(tenantId, texts.id, 100), smsOnly: smsOnlyRows };
    }
    if (Date.now() > deadline) throw new Error('Timed out waiting for the barrier text to be routed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  await createTestTable();
  server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tenantId = (await createTenant({ name: 'Text Events Org', smsNumber: ORG })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  texts = await addWebhookEndpoint(
    tenantId,
    { url: `${url}/texts`, events: ['message.delivered', 'message.failed'] },
    { allowInsecureTargets: true },
  );
  smsOnly = await addWebhookEndpoint(
    tenantId,
    { url: `${url}/sms`, events: ['sms.received'] },
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

describe('exactly one final event per text', () => {
  it('whatever order and however often the callbacks come, also all at once, and only to the endpoint that subscribed', async () => {
    // Prepare
    const delivered = await send(accepting);
    const refused = await send(accepting);

    // Act: sent after the final status, and duplicates; each text's callbacks all at once
    await Promise.all(
      ['delivered', 'sent', 'delivered', 'sent', 'delivered'].map((status, i) => callback(delivered, status, i)),
    );
    await Promise.all(
      ['failed', 'sent', 'failed', 'sent', 'failed'].map((status, i) =>
        callback(refused, status, 100 + i, status === 'failed' ? '30003' : undefined),
      ),
    );
    const rows = await deliveriesAfterBarrier();

    // Assess
    const [deliveredEvent] = eventsAbout(rows.texts, delivered.id);
    const [failedEvent] = eventsAbout(rows.texts, refused.id);
    expect(eventsAbout(rows.texts, delivered.id).map((d) => d.event)).toEqual(['message.delivered']);
    expect(eventsAbout(rows.texts, refused.id).map((d) => d.event)).toEqual(['message.failed']);
    const deliveredBody = JSON.parse(deliveredEvent.body);
    expect(deliveredBody.data).toMatchObject({
      messageId: delivered.id,
      status: 'delivered',
      message: { status: 'delivered', messageSid: delivered.messageSid },
    });
    expect([0, 2, 4].map((i) => received(i).toISOString())).toContain(deliveredBody.data.carrierReportedAt);
    const failedBody = JSON.parse(failedEvent.body);
    expect(failedBody.data).toMatchObject({
      status: 'failed',
      reason: 'carrier_failed',
      refunded: true,
      refundedCents: 1,
      message: { status: 'failed' },
    });
    expect(failedBody.data).toMatchObject({
      carrierErrorCode: 30003,
      carrierErrorMessage: 'Unreachable destination handset',
    });
    expect([100, 102, 104].map((i) => received(i).toISOString())).toContain(failedBody.data.carrierReportedAt);
    // The sequence counts the text's every change: insert, sid, and at least the final move.
    expect(deliveredBody.sequence).toBeGreaterThanOrEqual(3);
    expect(rows.smsOnly.filter((d) => d.event.startsWith('message.'))).toEqual([]);
    const ledger = await moneyLedgerOf(tenantId);
    expect(ledger.spendCents).toBe(ledger.owedCents);
  });

  it('for a text the carrier refused at once, and a late callback after it adds none', async () => {
    // Prepare
    const refused = await send(
      failing({
        kind: 'refused',
        httpStatus: 400,
        providerCode: 21211,
        providerMessage: "The 'To' number is not a valid phone number.",
      }),
    );

    // Act
    await callback({ ...refused, messageSid: newSid() }, 'failed', 200, '21211');
    const rows = await deliveriesAfterBarrier();

    // Assess
    const events = eventsAbout(rows.texts, refused.id);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0].body).data).toMatchObject({
      reason: 'carrier_rejected',
      carrierErrorCode: 21211,
      carrierErrorMessage: "The 'To' number is not a valid phone number.",
      carrierReportedAt: expect.any(String),
      refunded: true,
    });
  });

  it('for a text whose send outcome was unknown, settled by a failure callback, and the sweep after it adds none', async () => {
    // Prepare: the carrier took the text but its answer was lost; the callback names our id and its sid
    const unknown = await send(failing({ kind: 'unknown' }));

    // Act
    await callback({ ...unknown, messageSid: newSid() }, 'undelivered', 300, '30003');
    await settleUnknownOutcomes({ now: new Date(Date.now() + 3_600_000), graceMs: 0 });
    const rows = await deliveriesAfterBarrier();

    // Assess
    const events = eventsAbout(rows.texts, unknown.id);
    expect(events.map((d) => d.event)).toEqual(['message.failed']);
    expect(JSON.parse(events[0].body).data).toMatchObject({
      reason: 'carrier_failed',
      carrierErrorCode: 30003,
      carrierReportedAt: received(300).toISOString(),
    });
  });

  it('for a text nobody reported, failed by the settlement sweep, and a late delivered callback adds none', async () => {
    // Prepare
    const silent = await send(failing({ kind: 'unknown' }));

    // Act
    const swept = await settleUnknownOutcomes({ now: new Date(Date.now() + 3_600_000), graceMs: 0 });
    await callback({ ...silent, messageSid: newSid() }, 'delivered', 400);
    const rows = await deliveriesAfterBarrier();

    // Assess
    expect(swept.failed).toBeGreaterThanOrEqual(1);
    const events = eventsAbout(rows.texts, silent.id);
    expect(events.map((d) => d.event)).toEqual(['message.failed']);
    expect(JSON.parse(events[0].body).data).toMatchObject({
      reason: 'carrier_outcome_unknown',
      carrierReportedAt: null,
      carrierErrorCode: null,
      refunded: true,
    });
  });
});
