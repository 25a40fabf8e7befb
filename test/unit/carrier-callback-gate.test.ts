import { CarrierCallbackGate, TokenBucket } from '../../local/carrier-callback-gate';
import {
  withConnectionOverrides,
  CALLBACK_CONNECTION_OVERRIDES,
  hasTwilioSignatureShape,
} from '../../lambdas/contexts/carrier/callback-protection';
import { computeTwilioSignature } from '../../lambdas/contexts/carrier/signature';

const SIGNED = computeTwilioSignature(
  'https://api.example.com/carrier/twilio/sms/status',
  { MessageSid: 'SM1' },
  'token',
);
const STATUS = 'POST /carrier/twilio/sms/status';
const INBOUND = 'POST /carrier/twilio/sms/inbound';

const gateAt = (settings: Partial<ConstructorParameters<typeof CarrierCallbackGate>[0]> = {}) => {
  let now = 1_700_000_000_000;
  const gate = new CarrierCallbackGate(
    { rateLimit: 2, burstLimit: 3, limitPerMinutePerAddress: 100, ...settings },
    () => now,
  );
  return { gate, advance: (ms: number) => (now += ms) };
};

describe('the signature shape the edge accepts', () => {
  it('is a real X-Twilio-Signature and nothing shorter, longer or missing', () => {
    expect(hasTwilioSignatureShape(SIGNED)).toBe(true);
    expect(hasTwilioSignatureShape(undefined)).toBe(false);
    expect(hasTwilioSignatureShape('')).toBe(false);
    expect(hasTwilioSignatureShape('forged')).toBe(false);
    expect(hasTwilioSignatureShape(`${SIGNED}x`)).toBe(false);
    expect(hasTwilioSignatureShape(`a${SIGNED}`)).toBe(false);
  });
});

describe('the connection overrides on callback URLs', () => {
  it('asks Twilio for 5 retries on any failure within 15 s, as a fragment after the query', () => {
    expect(withConnectionOverrides('https://api.example.com/prod/carrier/twilio/sms/status?messageId=m1')).toBe(
      `https://api.example.com/prod/carrier/twilio/sms/status?messageId=m1#${CALLBACK_CONNECTION_OVERRIDES}`,
    );
    expect(CALLBACK_CONNECTION_OVERRIDES).toBe('ct=2000&rt=5000&tt=15000&rc=5&rp=all');
  });

  it('leaves an operator fragment in place', () => {
    expect(withConnectionOverrides('https://api.example.com/carrier/twilio/sms/status#rc=2')).toBe(
      'https://api.example.com/carrier/twilio/sms/status#rc=2',
    );
  });
});

describe('API Gateway throttle (token bucket)', () => {
  it('accepts the burst at once, then refills at the rate per second', () => {
    let now = 0;
    const bucket = new TokenBucket(2, 3, () => now);

    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, true, false]);
    now += 500; // one token back at 2 per second
    expect([bucket.take(), bucket.take()]).toEqual([true, false]);
    now += 10_000; // never more than the burst
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, true, false]);
  });
});

describe('the local edge in front of a carrier callback', () => {
  it('refuses a request without a well-formed signature with 403 before it counts against any limit', () => {
    // Prepare
    const { gate } = gateAt({ burstLimit: 2, rateLimit: 1, limitPerMinutePerAddress: 10 });
    // Act: a flood of unsigned and malformed requests from the carrier's own address
    const flood = Array.from({ length: 500 }, (_, i) =>
      gate.admit({ sourceIp: '198.51.100.7', signature: i % 2 ? undefined : 'not-a-signature', method: STATUS }),
    );
    const genuine = [
      gate.admit({ sourceIp: '198.51.100.7', signature: SIGNED, method: STATUS }),
      gate.admit({ sourceIp: '198.51.100.7', signature: SIGNED, method: STATUS }),
    ];
    // Assess
    expect(new Set(flood.map((a) => (a.admitted ? 'admitted' : `${a.by}`)))).toEqual(new Set(['signature']));
    expect(flood[0]).toMatchObject({ statusCode: 403, body: { code: 'invalid_signature' } });
    expect(genuine).toEqual([{ admitted: true }, { admitted: true }]);
  });

  it('cuts off one address over its limit per minute without touching another address', () => {
    // Prepare
    const { gate, advance } = gateAt({ rateLimit: 0, limitPerMinutePerAddress: 3 });
    const from = (sourceIp: string) => gate.admit({ sourceIp, signature: SIGNED, method: STATUS });
    // Act
    const forger = [from('203.0.113.9'), from('203.0.113.9'), from('203.0.113.9'), from('203.0.113.9')];
    const carrier = from('198.51.100.7');
    advance(60_000);
    const forgerNextMinute = from('203.0.113.9');
    // Assess
    expect(forger.map((a) => a.admitted)).toEqual([true, true, true, false]);
    expect(forger[3]).toMatchObject({
      by: 'address',
      statusCode: 429,
      retryAfterSeconds: 60,
      body: { code: 'rate_limited' },
    });
    expect(carrier.admitted).toBe(true);
    expect(forgerNextMinute.admitted).toBe(true);
  });

  it('throttles each callback method on its own bucket, for all addresses together', () => {
    // Prepare
    const { gate, advance } = gateAt({ rateLimit: 2, burstLimit: 3 });
    const post = (method: string, sourceIp: string) => gate.admit({ sourceIp, signature: SIGNED, method });
    // Act
    const statuses = [
      post(STATUS, '192.0.2.1'),
      post(STATUS, '192.0.2.2'),
      post(STATUS, '192.0.2.3'),
      post(STATUS, '192.0.2.4'),
    ];
    const inbound = post(INBOUND, '192.0.2.5');
    advance(500);
    const afterRefill = post(STATUS, '192.0.2.6');
    // Assess
    expect(statuses.map((a) => (a.admitted ? 'ok' : a.by))).toEqual(['ok', 'ok', 'ok', 'throttle']);
    expect(inbound.admitted).toBe(true);
    expect(afterRefill.admitted).toBe(true);
  });

  it('lets a path no method serves through to its 404 after the edge rules', () => {
    const { gate } = gateAt({ rateLimit: 1, burstLimit: 1 });

    expect([
      gate.admit({ sourceIp: '192.0.2.1', signature: SIGNED, method: undefined }),
      gate.admit({ sourceIp: '192.0.2.1', signature: SIGNED, method: undefined }),
    ]).toEqual([{ admitted: true }, { admitted: true }]);
  });
});
