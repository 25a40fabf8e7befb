import type { IncomingHttpHeaders } from 'node:http';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';
import { startReceiver, type Received, type Receiver } from './support/receiver';
import { webhookEventChecker } from './support/webhook-events';

/**
 * Signed events from the local runtime's webhook pipeline (the same router and sender code as in
 * AWS) to a real receiver on 127.0.0.1, registered with the operator CLI; the traffic comes from
 * the CLI's `simulate` commands, i.e. signed carrier callbacks. A short backoff base (20 ms: the
 * 8 attempts take about 2.5 s) and attempt timeout keep the retry scenarios fast.
 */
const e2e = useLocalRuntime({ args: ['--allow-http-webhooks', '--webhook-backoff-ms', '20', '--webhook-timeout-ms', '1000'] });

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

const admin = (...args: string[]) => e2e.runtime.admin(...args);
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
  [demoEndpoint, flaky, down] = await Promise.all([
    addEndpoint('--tenant', e2e.demoTenantId, '--url', receiver.url('/demo')),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/flaky'), '--events', 'call.completed'),
    addEndpoint('--tenant', retryTenantId, '--url', receiver.url('/down'), '--events', 'sms.received'),
  ]);
}, 90_000);

afterAll(() => receiver?.close());

const eventOf = (request: Received) => JSON.parse(request.body) as Event;

/** The requests to `path` carrying the event about the resource `kind` with this id, oldest first. */
const requestsAbout = (path: string, type: string, kind: string, id: string) =>
  receiver.received().filter((r) => r.path === path && r.headers['x-service-event'] === type && eventOf(r).data[kind]?.id === id);

/** The first request about the resource, once it has arrived. */
const delivered = (path: string, type: string, kind: string, id: string) =>
  pollUntil(`${type} about ${kind} ${id} at ${path}`, () => requestsAbout(path, type, kind, id), (found) => found.length > 0).then((found) => found[0]);

/** Only the deprecated names, as a receiver written before the rename reads them. */
const legacyOnly = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('x-service-')));

const deliveriesOf = async (endpointId: string) => (await admin('webhook', 'deliveries', endpointId)).deliveries as Record<string, unknown>[];

describe('events at a receiver', () => {
  it('delivers a signed call.completed after simulate call, verifiable with verifyDelivery and with the legacy headers', async () => {
    const { call } = await admin('simulate', 'call', '--tenant', e2e.demoTenantId, '--direction', 'inbound', '--from', '+14155550301', '--duration', '42');

    const request = await delivered('/demo', 'call.completed', 'call', call.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    expect(verifyDelivery(legacyOnly(request.headers), request.body, demoEndpoint.secret)).toEqual({ ok: true });
    expect(verifyDelivery(request.headers, `${request.body} `, demoEndpoint.secret)).toEqual({ ok: false, reason: 'bad_signature' });
    for (const name of ['event', 'timestamp', 'signature', 'delivery']) expect(request.headers[`x-legacy-${name}`]).toBe(request.headers[`x-service-${name}`]);
    checkEvent('call.completed', eventOf(request));
    expect(eventOf(request).data.call).toEqual(call);
    expect(call).toMatchObject({ direction: 'inbound', toNumber: DEMO_NUMBER, status: 'completed', durationSec: 42 });
  });

  it('delivers sms.received with the text after simulate sms', async () => {
    const { message } = await admin('simulate', 'sms', '--tenant', e2e.demoTenantId, '--from', '+14155550302', '--body', 'Is the order ready?');

    const request = await delivered('/demo', 'sms.received', 'message', message.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    checkEvent('sms.received', eventOf(request));
    expect(eventOf(request).data.message).toMatchObject({ id: message.id, direction: 'inbound', fromNumber: '+14155550302', toNumber: DEMO_NUMBER, body: 'Is the order ready?' });
  });

  it('delivers voicemail.received carrying the transcript after simulate voicemail', async () => {
    const { voicemail } = await admin('simulate', 'voicemail', '--tenant', e2e.demoTenantId, '--from', '+14155550303', '--transcript', 'Please call me back');

    const request = await delivered('/demo', 'voicemail.received', 'voicemail', voicemail.id);

    expect(verifyDelivery(request.headers, request.body, demoEndpoint.secret)).toEqual({ ok: true });
    checkEvent('voicemail.received', eventOf(request));
    expect(eventOf(request).data.voicemail).toMatchObject({ id: voicemail.id, callId: voicemail.callId, fromNumber: '+14155550303', transcript: 'Please call me back' });
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
      expect.arrayContaining([flaky, down].map(({ secret: _secret, ...shown }) => ({ ...shown, createdAt: expect.any(String) }))),
    );
    expect(JSON.stringify(endpoints)).not.toContain('whsec_');
  });
});

describe('retries', () => {
  it('loses nothing when the receiver fails, times out and redirects before it recovers: one delivery id throughout', async () => {
    receiver.script('/flaky', ['fail', 'hang', 'redirect'], 'ok');
    const { call } = await admin('simulate', 'call', '--tenant', retryTenantId, '--direction', 'inbound', '--from', '+14155550311');

    const attempts = await pollUntil(
      'the flaky endpoint to acknowledge the call',
      () => requestsAbout('/flaky', 'call.completed', 'call', call.id),
      (found) => found.some((r) => r.reply === 'ok'),
    );
    const [delivery] = await pollUntil('the delivery log to say succeeded', () => deliveriesOf(flaky.id), (list) => list[0]?.status === 'succeeded');

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
      const { message } = await admin('simulate', 'sms', '--tenant', retryTenantId, '--from', '+14155550312', '--body', 'Anyone there?');

      const [delivery] = await pollUntil('the delivery log to say failed', () => deliveriesOf(down.id), (list) => list[0]?.status === 'failed', 25_000, 0);
      const attempts = requestsAbout('/down', 'sms.received', 'message', message.id);
      deliveryId = delivery.id as string;

      expect(delivery).toMatchObject({ event: 'sms.received', status: 'failed', attempts: 8, nextRetryAt: null, lastError: expect.stringContaining('HTTP 500') });
      expect(attempts).toHaveLength(8);
      expect(new Set(attempts.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([deliveryId]));
    });

    it('delivers the same delivery again with webhook redeliver once the receiver is back', async () => {
      receiver.script('/down', [], 'ok');
      const before = receiver.received().length;

      const { delivery } = await admin('webhook', 'redeliver', deliveryId);
      const request = await pollUntil(
        'the redelivery',
        () => receiver.received().slice(before).find((r) => r.headers['x-service-delivery'] === deliveryId),
        (found) => found !== undefined,
      );
      const [logged] = await pollUntil('the delivery log to say succeeded', () => deliveriesOf(down.id), (list) => list[0]?.status === 'succeeded', 15_000, 0);

      expect(delivery).toMatchObject({ id: deliveryId, status: 'pending', attempts: 0 });
      expect(request!.reply).toBe('ok');
      expect(verifyDelivery(request!.headers, request!.body, down.secret)).toEqual({ ok: true });
      expect(logged).toMatchObject({ id: deliveryId, status: 'succeeded', attempts: 1 });
    });
  });
});

describe('what the runtime logs', () => {
  it('never shows an endpoint secret or a text body', () => {
    const log = e2e.runtime.stdout() + e2e.runtime.stderr();

    for (const { secret } of [demoEndpoint, flaky, down]) expect(log).not.toContain(secret);
    expect(log).not.toContain('Is the order ready?');
    expect(log).not.toContain('Anyone there?');
  });
});
