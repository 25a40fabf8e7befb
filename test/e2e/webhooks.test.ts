import type { IncomingHttpHeaders } from 'node:http';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';
import { startReceiver, type Received, type Receiver } from './support/receiver';
import { receiveTexts } from './support/texts';
import { postCallback } from './support/twilio';
import { webhookEventChecker } from './support/webhook-events';

/**
 * Signed events from the local runtime's webhook pipeline (the same router and sender code as in
 * AWS) to a real receiver on 127.0.0.1, registered with the operator CLI; the traffic comes from
 * the CLI's `simulate` commands, i.e. signed carrier callbacks. A short backoff base (20 ms: the
 * 8 attempts take about 2.5 s) and attempt timeout keep the retry scenarios fast.
 */
const e2e = useLocalRuntime({
  args: ['--allow-http-webhooks', '--webhook-backoff-ms', '20', '--webhook-timeout-ms', '1000'],
  // The loopback carrier plays no statuses of its own within a test: the tests post the carrier's callbacks themselves.
  env: { LOOPBACK_STATUS_DELAY_MS: '3600000' },
});

const DEMO_NUMBER = '+15005550006';
const RETRY_NUMBER = '+15005550070';

type Endpoint = { id: string; url: string; events: string[]; secret: string };
type Event = { id: string; type: string; createdAt: string; data: Record<string, Record<string, unknown>> };

let receiver: Receiver;
let checkEvent: (type: string, body: unknown) => void;
/** Every event of the demo organization. */
let demoEndpoint: Endpoint;
/** Another organization's endpoints: one that stumbles before it recovers, one that is down. */
let retryTenantId: string;
let flaky: Endpoint;
let down: Endpoint;
/**
 * The demo organization's text outcomes (subscribed with webhook update), and an endpoint of its inbound texts only.
 */
let texts: Endpoint;
let smsOnly: Endpoint;
/** Retry Org's endpoints of inbound texts: one that answers 410, one that goes through an outage. */
let gone: Endpoint;
let outage: Endpoint;

/**
 * The commands run in this process (the same `runAdmin` and document as bin/admin.ts); `webhook redeliver`, which
 * delivers over HTTP, runs as a process too, as an operator runs it, which also proves such a command's process ends
 * once it is done (an open socket would keep it).
 */
const admin = (...args: string[]) => e2e.runtime.admin(...args);
const adminProcess = (...args: string[]) => e2e.runtime.adminProcess(...args);
const addEndpoint = async (...args: string[]): Promise<Endpoint> => {
  const { endpoint, secret } = await admin('webhook', 'add', ...args);
  return { ...endpoint, secret };
};

beforeAll(async () => {
  receiver = await startReceiver();
  checkEvent = await webhookEventChecker(e2e.runtime.baseUrl);
  const [, retryOrg] = await Promise.all([
    // A receiver on this machine: approved like any host; --allow-http-webhooks lets http and loopback through.
    admin('tenant', 'update', e2e.demoTenantId, '--approve-host', '127.0.0.1'),
    admin('tenant', 'create', '--name', 'Retry Org', '--number', RETRY_NUMBER),
  ]);
  retryTenantId = retryOrg.tenant.id;
  await admin('tenant', 'update', retryTenantId, '--approve-host', '127.0.0.1');
  let textsAdded: Endpoint;
  [demoEndpoint, flaky, down, textsAdded, smsOnly, gone, outage] = await Promise.all([
    addEndpoint('--tenant', e2e.demoTenantId, '--url', receiver.url('/demo')),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/flaky'), '--events', 'call.completed'),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/down'), '--events', 'sms.received'),
    addEndpoint('--tenant', e2e.demoTenantId, '--url', receiver.url('/texts'), '--events', 'call.completed'),
    addEndpoint('--tenant', e2e.demoTenantId, '--url', receiver.url('/sms-only'), '--events', 'sms.received'),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/gone'), '--events', 'sms.received'),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/outage'), '--events', 'sms.received'),
  ]);
  // An existing endpoint's subscription changed: the new events in, call.completed out.
  const { endpoint: updated } = await admin(
    'webhook',
    'update',
    textsAdded.id,
    '--events',
    'message.delivered,message.failed',
  );
  texts = { ...updated, secret: textsAdded.secret };
}, 120_000);

afterAll(() => receiver?.close());

const eventOf = (request: Received) => JSON.parse(request.body) as Event;

/** The requests to `path` carrying the event about the resource `kind` with this id, oldest first. */
const requestsAbout = (path: string, type: string, kind: string, id: string) =>
  receiver
    .received()
    .filter((r) => r.path === path && r.headers['x-service-event'] === type && eventOf(r).data[kind]?.id === id);

/** The first request about the resource, once it has arrived. */
const firstRequestAbout = (path: string, type: string, kind: string, id: string) =>
  pollUntil(
    `${type} about ${kind} ${id} at ${path}`,
    () => requestsAbout(path, type, kind, id),
    (found) => found.length > 0,
  ).then((found) => found[0]);

/** Only the deprecated names, as a receiver written before the rename reads them. */
const legacyOnly = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('x-service-')));

const deliveriesOf = async (endpointId: string) =>
  (await admin('webhook', 'deliveries', endpointId)).deliveries as Record<string, unknown>[];

describe('events at a receiver', () => {
  it('delivers a signed call.completed after simulate call, verifiable with verifyDelivery and with the legacy headers', async () => {
    const { call } = await admin(
      'simulate',
      'call',
      '--tenant',
      e2e.demoTenantId,
      '--direction',
      'inbound',
      '--from',
      '+14155550301',
      '--duration',
      '42',
    );

    const request = await firstRequestAbout('/demo', 'call.completed', 'call', call.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    expect(verifyDelivery(legacyOnly(request.headers), request.body, demoEndpoint.secret)).toEqual({ ok: true });
    expect(verifyDelivery(request.headers, `${request.body} `, demoEndpoint.secret)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    for (const name of ['event', 'timestamp', 'signature', 'delivery'])
      expect(request.headers[`x-legacy-${name}`]).toBe(request.headers[`x-service-${name}`]);
    checkEvent('call.completed', eventOf(request));
    expect(eventOf(request).data.call).toEqual(call);
    expect(call).toMatchObject({ direction: 'inbound', toNumber: DEMO_NUMBER, status: 'completed', durationSec: 42 });
  });

  it('delivers sms.received with the text after simulate sms', async () => {
    const { message } = await admin(
      'simulate',
      'sms',
      '--tenant',
      e2e.demoTenantId,
      '--from',
      '+14155550302',
      '--body',
      'Is the order ready?',
    );

    const request = await firstRequestAbout('/demo', 'sms.received', 'message', message.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    checkEvent('sms.received', eventOf(request));
    expect(eventOf(request).data.message).toMatchObject({
      id: message.id,
      direction: 'inbound',
      fromNumber: '+14155550302',
      toNumber: DEMO_NUMBER,
      body: 'Is the order ready?',
    });
  });

  it('delivers voicemail.received carrying the transcript after simulate voicemail', async () => {
    const { voicemail } = await admin(
      'simulate',
      'voicemail',
      '--tenant',
      e2e.demoTenantId,
      '--from',
      '+14155550303',
      '--transcript',
      'Please call me back',
    );

    const request = await firstRequestAbout('/demo', 'voicemail.received', 'voicemail', voicemail.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    checkEvent('voicemail.received', eventOf(request));
    expect(eventOf(request).data.voicemail).toMatchObject({
      id: voicemail.id,
      callId: voicemail.callId,
      fromNumber: '+14155550303',
      transcript: 'Please call me back',
    });
  });

  it('sends a signed webhook.test with webhook test and prints its first attempt', async () => {
    const { delivery } = await admin('webhook', 'test', demoEndpoint.id);

    const [request] = receiver.received().filter((r) => r.headers['x-service-delivery'] === delivery.id);

    expect(delivery).toMatchObject({ event: 'webhook.test', status: 'succeeded', attempts: 1 });
    expect(eventOf(request)).toMatchObject({ type: 'webhook.test', data: { endpointId: demoEndpoint.id } });
    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
  });

  it('lists the endpoints without their secrets', async () => {
    const { endpoints } = await admin('webhook', 'list', '--tenant', retryTenantId);

    expect(endpoints).toEqual(
      expect.arrayContaining(
        [flaky, down].map(({ secret: _secret, ...shown }) => ({ ...shown, createdAt: expect.any(String) })),
      ),
    );
    expect(JSON.stringify(endpoints)).not.toContain('whsec_');
  });
});

describe('retries', () => {
  it('loses nothing when the receiver fails, times out and redirects before it recovers: one delivery id throughout', async () => {
    receiver.script('/flaky', ['fail', 'hang', 'redirect'], 'ok');
    const { call } = await admin(
      'simulate',
      'call',
      '--tenant',
      retryTenantId,
      '--direction',
      'inbound',
      '--from',
      '+14155550311',
    );

    const attempts = await pollUntil(
      'the flaky endpoint to acknowledge the call',
      () => requestsAbout('/flaky', 'call.completed', 'call', call.id),
      (found) => found.some((r) => r.reply === 'ok'),
    );
    const [delivery] = await pollUntil(
      'the delivery log to say succeeded',
      () => deliveriesOf(flaky.id),
      (list) => list[0]?.status === 'succeeded',
    );

    expect(attempts.map((r) => r.reply)).toEqual(['fail', 'hang', 'redirect', 'ok']);
    expect(new Set(attempts.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([delivery.id]));
    expect(new Set(attempts.map((r) => eventOf(r).id)).size).toBe(1);
    expect(attempts.every((r) => verifyDelivery(r.headers, r.body, flaky.secret).ok)).toBe(true);
    expect(delivery).toMatchObject({ event: 'call.completed', status: 'succeeded', attempts: 4, nextRetryAt: null });
  });

  describe('a receiver that is down', () => {
    let deliveryId: string;

    it('ends in failed after the eighth failed attempt, with the last error in the delivery log', async () => {
      receiver.script('/down', [], 'fail');
      const { message } = await admin(
        'simulate',
        'sms',
        '--tenant',
        retryTenantId,
        '--from',
        '+14155550312',
        '--body',
        'Anyone there?',
      );

      const [delivery] = await pollUntil(
        'the delivery log to say failed',
        () => deliveriesOf(down.id),
        (list) => list[0]?.status === 'failed',
        25_000,
        0,
      );
      const attempts = requestsAbout('/down', 'sms.received', 'message', message.id);
      deliveryId = delivery.id as string;

      expect(delivery).toMatchObject({
        event: 'sms.received',
        status: 'failed',
        attempts: 8,
        nextRetryAt: null,
        lastError: expect.stringContaining('HTTP 500'),
      });
      expect(attempts).toHaveLength(8);
      expect(new Set(attempts.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([deliveryId]));
    });

    it('delivers the same delivery again with webhook redeliver once the receiver is back', async () => {
      receiver.script('/down', [], 'ok');
      const before = receiver.received().length;

      const { delivery } = await adminProcess('webhook', 'redeliver', deliveryId);
      const request = await pollUntil(
        'the redelivery',
        () =>
          receiver
            .received()
            .slice(before)
            .find((r) => r.headers['x-service-delivery'] === deliveryId),
        (found) => found !== undefined,
      );
      const [logged] = await pollUntil(
        'the delivery log to say succeeded',
        () => deliveriesOf(down.id),
        (list) => list[0]?.status === 'succeeded',
        15_000,
        0,
      );

      expect(delivery).toMatchObject({ id: deliveryId, status: 'pending', attempts: 0 });
      expect(request!.reply).toBe('ok');
      expect(verifyDelivery(request!.headers, request!.body, down.secret)).toEqual({ ok: true });
      expect(logged).toMatchObject({ id: deliveryId, status: 'succeeded', attempts: 1 });
    });
  });
});

describe('the fate of every text: message.delivered and message.failed', () => {
  const carrier = () => {
    const root = e2e.runtime.baseUrl.replace(/\/api\/v1$/, '');
    return { runtimeRoot: root, signedRoot: root, authToken: LOCAL_TWILIO_AUTH_TOKEN };
  };
  /** A status callback as Twilio posts it, signed, to the URL each text gives the carrier (it names our message id). */
  const statusCallback = async (
    message: { id: string; messageSid: string; toNumber: string },
    status: string,
    errorCode?: string,
  ) => {
    const answer = await postCallback(carrier(), `${carrierRoutes.twilioSmsStatus.path}?messageId=${message.id}`, {
      MessageSid: message.messageSid,
      SmsSid: message.messageSid,
      MessageStatus: status,
      SmsStatus: status,
      From: DEMO_NUMBER,
      To: message.toNumber,
      AccountSid: 'AC00000000000000000000000000000000',
      ...(errorCode && { ErrorCode: errorCode }),
    });
    expect(answer.status).toBe(200);
  };
  const send = async (to: string) => {
    const response = await e2e.api.post('/messages', e2e.runtime.demoKey, { to, body: 'Your table is ready' });
    expect(response.status).toBe(201);
    return response.body.message as { id: string; messageSid: string; toNumber: string };
  };
  const messageEventsAt = (path: string, messageId?: string) =>
    receiver
      .received()
      .filter(
        (r) =>
          r.path === path &&
          r.headers['x-service-event']!.toString().startsWith('message.') &&
          (!messageId || eventOf(r).data.messageId?.toString() === messageId),
      );

  it('sends exactly one signed event of the right type per text, with callbacks reordered and duplicated, and only to the endpoint subscribed to it', async () => {
    // Prepare
    const [delivered, refused] = [await send('+14155550331'), await send('+14155550332')];

    // Act: the carrier's callbacks out of order and twice: sent after the final status, the final status again
    for (const status of ['delivered', 'sent', 'delivered', 'sent']) await statusCallback(delivered, status);
    for (const [status, code] of [['undelivered', '30003'], ['sent'], ['undelivered', '30003'], ['delivered']])
      await statusCallback(refused, status, code);
    // A text received afterwards: once /sms-only has it, the stream was read past every change above.
    const [barrier] = await receiveTexts(e2e.runtime.info, e2e.demoTenantId, [
      { from: '+14155550333', to: DEMO_NUMBER, body: 'barrier', receivedAt: new Date() },
    ]);
    await firstRequestAbout('/sms-only', 'sms.received', 'message', barrier.message.id);
    await pollUntil(
      'both outcomes at /texts',
      () => [messageEventsAt('/texts', delivered.id), messageEventsAt('/texts', refused.id)],
      ([a, b]) => a.length > 0 && b.length > 0,
    );
    const log = await pollUntil(
      'every delivery to /texts to be settled',
      () => deliveriesOf(texts.id),
      (list) => list.every((d) => d.status !== 'pending'),
    );

    // Assess
    const [deliveredEvents, failedEvents] = [
      messageEventsAt('/texts', delivered.id),
      messageEventsAt('/texts', refused.id),
    ];
    expect(deliveredEvents.map((r) => r.headers['x-service-event'])).toEqual(['message.delivered']);
    expect(failedEvents.map((r) => r.headers['x-service-event'])).toEqual(['message.failed']);
    expect(log.filter((d) => String(d.event).startsWith('message.'))).toHaveLength(2);
    for (const request of [...deliveredEvents, ...failedEvents]) {
      expect(verifyDelivery(request.headers, request.body, texts.secret)).toEqual({ ok: true });
      checkEvent(String(request.headers['x-service-event']), eventOf(request));
    }
    expect(eventOf(deliveredEvents[0])).toMatchObject({
      sequence: expect.any(Number),
      data: { messageId: delivered.id, status: 'delivered', message: { id: delivered.id, status: 'delivered' } },
    });
    expect(eventOf(failedEvents[0]).data).toMatchObject({
      reason: 'carrier_failed',
      carrierErrorCode: 30003,
      carrierErrorMessage: 'Unreachable destination handset',
      refunded: true,
    });
    // The endpoint of inbound texts only, and the one with the contract's three events, get neither.
    expect(messageEventsAt('/sms-only')).toEqual([]);
    expect(messageEventsAt('/demo')).toEqual([]);
    // The conversation shows the same final statuses.
    const conversation = await e2e.api.get(`/messages/${refused.toNumber}`, e2e.runtime.demoKey);
    expect(conversation.body.messages[0]).toEqual(eventOf(failedEvents[0]).data.message);
  });
});

describe('endpoint health and recovery', () => {
  const endpointIn = async (tenantId: string, id: string) =>
    ((await admin('webhook', 'list', '--tenant', tenantId)).endpoints as Record<string, unknown>[]).find(
      (e) => e.id === id,
    )!;
  const textToRetryOrg = async (body: string) =>
    (
      await receiveTexts(e2e.runtime.info, retryTenantId, [
        { from: '+14155550341', to: RETRY_NUMBER, body, receivedAt: new Date() },
      ])
    )[0].message;

  it('disables at once an endpoint that answers 410: no retry, and webhook list shows it disabled and why', async () => {
    // Prepare
    receiver.script('/gone', [], 'gone');
    receiver.script('/outage', [], 'ok');

    // Act
    const message = await textToRetryOrg('Knock knock');
    await firstRequestAbout('/gone', 'sms.received', 'message', message.id);
    const [logged] = await pollUntil(
      'the delivery to /gone to end',
      () => deliveriesOf(gone.id),
      (list) => list[0]?.status === 'failed',
    );
    const shown = await endpointIn(retryTenantId, gone.id);

    // Assess
    expect(logged).toMatchObject({ status: 'failed', attempts: 1, lastError: expect.stringContaining('HTTP 410') });
    expect(requestsAbout('/gone', 'sms.received', 'message', message.id)).toHaveLength(1);
    expect(shown).toMatchObject({ state: 'disabled', enabled: false, disabledReason: 'gone' });
  });

  it('re-sends with webhook recover exactly the deliveries that failed in an outage, once, however often it runs', async () => {
    // Prepare: one text before the outage, two during it (each fails 8 times, about 2.5 s here)
    const before = await textToRetryOrg('Before the outage');
    await firstRequestAbout('/outage', 'sms.received', 'message', before.id);
    const outageStart = new Date().toISOString();
    receiver.script('/outage', [], 'fail');
    const during = [await textToRetryOrg('During the outage 1'), await textToRetryOrg('During the outage 2')];
    // Watched at the receiver (cheap), then read from the delivery log.
    await pollUntil(
      '8 attempts of each',
      () => during.map((m) => requestsAbout('/outage', 'sms.received', 'message', m.id).length),
      (counts) => counts.every((n) => n === 8),
      25_000,
    );
    const failed = await pollUntil(
      'both to fail for good',
      () => deliveriesOf(outage.id),
      (list) => list.filter((d) => d.status === 'failed').length === 2,
      10_000,
      100,
    );
    const failedIds = failed.filter((d) => d.status === 'failed').map((d) => d.id as string);
    receiver.script('/outage', [], 'ok');
    const sentBefore = receiver.received().length;

    // Act
    const { recovered: first } = await admin('webhook', 'recover', '--endpoint', outage.id, '--since', outageStart);
    await pollUntil(
      'the recovered deliveries',
      () =>
        receiver
          .received()
          .slice(sentBefore)
          .filter((r) => r.path === '/outage' && r.reply === 'ok'),
      (found) => found.length >= 2,
    );
    const { recovered: second } = await admin('webhook', 'recover', '--endpoint', outage.id, '--since', outageStart);

    // Assess
    const resent = receiver
      .received()
      .slice(sentBefore)
      .filter((r) => r.path === '/outage');
    expect(first).toMatchObject({ endpointId: outage.id, queuedCount: 2, skipped: 0, continueAfter: null });
    expect(first.queued.map((q: { id: string }) => q.id)).toEqual([...failedIds].sort());
    expect(second.queuedCount).toBe(0);
    expect(resent.map((r) => r.headers['x-service-delivery']).sort()).toEqual([...failedIds].sort());
    for (const request of resent) {
      const original = receiver
        .received()
        .find((r) => r.headers['x-service-delivery'] === request.headers['x-service-delivery'])!;
      expect(request.body).toBe(original.body);
      expect(verifyDelivery(request.headers, request.body, outage.secret)).toEqual({ ok: true });
    }
    expect(resent.map((r) => eventOf(r).data.message.id).sort()).toEqual(during.map((m) => m.id).sort());
  });
});

describe('what the runtime logs', () => {
  it('never shows an endpoint secret or a text body', () => {
    const log = e2e.runtime.stdout() + e2e.runtime.stderr();

    for (const { secret } of [demoEndpoint, flaky, down, texts, smsOnly, gone, outage])
      expect(log).not.toContain(secret);
    expect(log).not.toContain('Is the order ready?');
    expect(log).not.toContain('Anyone there?');
  });
});
