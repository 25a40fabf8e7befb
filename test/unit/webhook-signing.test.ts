import { createHmac } from 'node:crypto';
import {
  deliveryHeaders,
  generateSecret,
  serviceSignature,
  standardWebhooksSignature,
  USER_AGENT,
} from '../../lambdas/contexts/webhooks/internal/signing';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';

// The Standard Webhooks published test vector (used by the reference libraries' own tests).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('signatures', () => {
  it('X-Service-Signature is hex HMAC-SHA256 keyed with the secret string as issued', () => {
    // Prepare: computed independently with
    // printf '%s' '1614265330123.{"id":"e1","type":"call.completed"}' | openssl dgst -sha256 -hmac
    // 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const expected = '38a098a5b70f8c888c73407dc2ed2e77ad05e3a5a826d1538c03c861ccf3dc9f';

    // Act
    const signature = serviceSignature(SECRET, '1614265330123', '{"id":"e1","type":"call.completed"}');

    // Assess
    expect(signature).toBe(expected);
  });

  it('webhook-signature reproduces the Standard Webhooks published vector', () => {
    const signature = standardWebhooksSignature(
      SECRET,
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      '1614265330',
      '{"test": 2432232314}',
    );

    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('issues whsec_ secrets of 32 random bytes in base64', () => {
    const [a, b] = [generateSecret(), generateSecret()];

    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('delivery headers', () => {
  const body = '{"id":"0190a5b0-0000-8000-8000-000000000000","type":"sms.received","data":{}}';
  const nowMs = 1_700_000_123_456;
  const headers = deliveryHeaders({ secret: SECRET, deliveryId: 'dlv-1', eventType: 'sms.received', body, nowMs });

  it('carries the X-Service names, the same values under the X-Legacy names, and Standard Webhooks', () => {
    expect(Object.keys(headers).sort()).toEqual(
      [
        'Content-Type',
        'User-Agent',
        'X-Service-Event',
        'X-Service-Timestamp',
        'X-Service-Signature',
        'X-Service-Delivery',
        'X-Legacy-Event',
        'X-Legacy-Timestamp',
        'X-Legacy-Signature',
        'X-Legacy-Delivery',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ].sort(),
    );
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'X-Service-Event': 'sms.received',
      'X-Service-Timestamp': '1700000123456',
      'X-Service-Delivery': 'dlv-1',
      'webhook-id': 'dlv-1',
      'webhook-timestamp': '1700000123',
    });
    for (const field of ['Event', 'Timestamp', 'Signature', 'Delivery']) {
      expect(headers[`X-Legacy-${field}`]).toBe(headers[`X-Service-${field}`]);
    }
  });

  it('signs both schemes as a second implementation computes them', () => {
    const hex = createHmac('sha256', SECRET).update(`1700000123456.${body}`).digest('hex');
    const key = Buffer.from(SECRET.replace(/^whsec_/, ''), 'base64');
    const standard = createHmac('sha256', key).update(`dlv-1.1700000123.${body}`).digest('base64');

    expect(headers['X-Service-Signature']).toBe(hex);
    expect(headers['webhook-signature']).toBe(`v1,${standard}`);
  });
});

describe('verifyDelivery', () => {
  const body = '{"id":"e1","type":"call.completed","data":{"call":{}}}';
  const now = 1_700_000_000_000;
  const signed = (overrides: Partial<Parameters<typeof deliveryHeaders>[0]> = {}) =>
    deliveryHeaders({
      secret: SECRET,
      deliveryId: 'dlv-1',
      eventType: 'call.completed',
      body,
      nowMs: now,
      ...overrides,
    });

  it('accepts an untouched delivery, with the headers in any letter case, as a string or as bytes', () => {
    const lower = Object.fromEntries(Object.entries(signed()).map(([k, v]) => [k.toLowerCase(), v]));

    expect(verifyDelivery(signed(), body, SECRET, now)).toEqual({ ok: true });
    expect(verifyDelivery(lower, Buffer.from(body), SECRET, new Date(now))).toEqual({ ok: true });
    expect(verifyDelivery(new Headers(signed()), body, SECRET, now)).toEqual({ ok: true });
  });

  it('refuses a tampered body and a wrong secret', () => {
    expect(verifyDelivery(signed(), body.replace('e1', 'e2'), SECRET, now)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyDelivery(signed(), body, generateSecret(), now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a signature of another length without comparing', () => {
    const headers = { ...signed(), 'X-Service-Signature': signed()['X-Service-Signature'].slice(0, 63) };

    expect(verifyDelivery(headers, body, SECRET, now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a timestamp five minutes or more away, either direction', () => {
    const fiveMinutes = 5 * 60 * 1000;

    expect(verifyDelivery(signed(), body, SECRET, now + fiveMinutes - 1)).toEqual({ ok: true });
    expect(verifyDelivery(signed(), body, SECRET, now + fiveMinutes)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(verifyDelivery(signed(), body, SECRET, now - fiveMinutes)).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('signs the timestamp as sent: a reformatted timestamp no longer verifies', () => {
    const headers = { ...signed(), 'X-Service-Timestamp': `0${signed()['X-Service-Timestamp']}` };

    expect(verifyDelivery(headers, body, SECRET, now)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses missing or malformed headers and falls back to the legacy names', () => {
    const { 'X-Service-Timestamp': _t, 'X-Service-Signature': _s, ...legacyOnly } = signed();

    expect(verifyDelivery({}, body, SECRET, now)).toEqual({ ok: false, reason: 'missing_headers' });
    expect(verifyDelivery({ ...signed(), 'X-Service-Timestamp': '17e11' }, body, SECRET, now)).toEqual({
      ok: false,
      reason: 'malformed_timestamp',
    });
    expect(verifyDelivery(legacyOnly, body, SECRET, now)).toEqual({ ok: true });
  });
});
