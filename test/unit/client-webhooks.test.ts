import {
  deliveryHeaders,
  generateSecret,
  standardWebhooksSignature,
} from '../../lambdas/contexts/webhooks/internal/signing';
import {
  deliveryId,
  eventResource,
  verifyStandardWebhook,
  Webhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventOf,
} from '../../clients/typescript/src/webhooks';
import { WEBHOOK_EXAMPLES } from '../../lambdas/handlers/api/openapi/examples';

// The Standard Webhooks published test vector (the reference libraries' own tests use it).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const VECTOR = {
  headers: {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  body: '{"test": 2432232314}',
  now: 1614265330_000,
};

describe('verifyStandardWebhook', () => {
  it('accepts the published Standard Webhooks vector', () => {
    expect(verifyStandardWebhook(VECTOR.headers, VECTOR.body, SECRET, VECTOR.now)).toEqual({ ok: true });
  });

  it('accepts any one of several signatures, as during a secret rotation, and any one of several secrets', () => {
    // Prepare: the header lists a signature made with another secret first, as a rotating sender does.
    const other = generateSecret();
    const theirs = standardWebhooksSignature(
      other,
      VECTOR.headers['webhook-id'],
      VECTOR.headers['webhook-timestamp'],
      VECTOR.body,
    );
    const headers = { ...VECTOR.headers, 'webhook-signature': `${theirs} ${VECTOR.headers['webhook-signature']}` };

    // Act + Assess
    expect(verifyStandardWebhook(headers, VECTOR.body, SECRET, VECTOR.now)).toEqual({ ok: true });
    expect(verifyStandardWebhook(VECTOR.headers, VECTOR.body, [other, SECRET], VECTOR.now)).toEqual({ ok: true });
    expect(verifyStandardWebhook(VECTOR.headers, VECTOR.body, [other], VECTOR.now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('binds the delivery id: the same signature under another webhook-id fails', () => {
    const headers = { ...VECTOR.headers, 'webhook-id': 'msg_another' };

    expect(verifyStandardWebhook(headers, VECTOR.body, SECRET, VECTOR.now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('refuses a timestamp five minutes or more away, missing headers and a malformed timestamp', () => {
    const fiveMinutes = 5 * 60 * 1000;

    expect(verifyStandardWebhook(VECTOR.headers, VECTOR.body, SECRET, VECTOR.now + fiveMinutes - 1000)).toEqual({
      ok: true,
    });
    expect(verifyStandardWebhook(VECTOR.headers, VECTOR.body, SECRET, VECTOR.now - fiveMinutes)).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(verifyStandardWebhook({}, VECTOR.body, SECRET, VECTOR.now)).toEqual({
      ok: false,
      reason: 'missing_headers',
    });
    expect(
      verifyStandardWebhook({ ...VECTOR.headers, 'webhook-timestamp': '1.6e9' }, VECTOR.body, SECRET, VECTOR.now),
    ).toEqual({
      ok: false,
      reason: 'malformed_timestamp',
    });
  });
});

describe('Webhook', () => {
  const body = '{"id":"e1","type":"webhook.test","createdAt":"2026-11-25T00:00:00.000Z","data":{"endpointId":"x"}}';
  const nowMs = 1_700_000_123_456;
  const headers = deliveryHeaders({ secret: SECRET, deliveryId: 'dlv-1', eventType: 'webhook.test', body, nowMs });
  const serviceOnly = Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('X-')));

  it('returns the event of a genuine delivery, from the Standard Webhooks headers or the service headers alone', () => {
    const webhook = new Webhook(SECRET);

    expect(webhook.verify(body, headers, nowMs)).toEqual(JSON.parse(body));
    expect(webhook.verify(Buffer.from(body), serviceOnly, nowMs)).toEqual(JSON.parse(body));
    expect(deliveryId(headers)).toBe('dlv-1');
    expect(deliveryId(serviceOnly)).toBe('dlv-1');
  });

  it('checks the Standard Webhooks signature when it is present, even if the service signature is genuine', () => {
    const forged = { ...headers, 'webhook-signature': 'v1,AAAA' };

    expect(() => new Webhook(SECRET).verify(body, forged, nowMs)).toThrow(
      new WebhookVerificationError('bad_signature'),
    );
  });

  it('throws a WebhookVerificationError naming the reason for a tampered body', () => {
    const act = () => new Webhook(SECRET).verify(body.replace('e1', 'e2'), headers, nowMs);

    expect(act).toThrow(WebhookVerificationError);
    expect(act).toThrow('Webhook verification failed: bad_signature');
  });
});

describe('eventResource', () => {
  it('names the resource of every event type of the document, and none for webhook.test', () => {
    // Prepare: the examples of the OpenAPI document, one per event type
    const examples = WEBHOOK_EXAMPLES as Record<string, WebhookEvent>;

    // Act
    const resources = Object.fromEntries(
      Object.entries(examples).map(([type, event]) => [type, eventResource(event)?.type ?? null]),
    );

    // Assess
    expect(resources).toEqual({
      'call.completed': 'call',
      'voicemail.received': 'voicemail',
      'sms.received': 'message',
      'message.canceled': 'message',
      'message.delivered': 'message',
      'message.failed': 'message',
      'contact.created': 'contact',
      'contact.updated': 'contact',
      'contact.deleted': 'contact',
      'consent.changed': 'consent',
      'webhook.test': null,
    });
    expect(eventResource(examples['contact.deleted'])!.id).toBe(eventResource(examples['contact.created'])!.id);
    expect(eventResource(examples['consent.changed'])!.id).toBe(
      (examples['consent.changed'] as WebhookEventOf<'consent.changed'>).data.consent.number,
    );
    expect(eventResource(examples['message.failed'])!.id).toBe(
      (examples['message.failed'] as WebhookEventOf<'message.failed'>).data.messageId,
    );
  });
});
