import { randomBytes } from 'node:crypto';
import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { useLocalRuntime } from './support/e2e';
import { unbindableLoopbackReason } from './support/loopback-aliases';
import { deliverAsTwilio, postFrom, twilioSignature, type TwilioDelivery } from './support/twilio';

/**
 * Genuine carrier callbacks under a flood of forged ones (docs/decisions.md, "Carrier callbacks
 * under a flood"), over real HTTP from distinct client addresses (127.0.0.0/8 binds locally):
 * "Twilio" posts from 127.0.0.2-4 and retries as the connection overrides in the URL ask; forgers
 * post from other addresses. The runtime's callback limits are set small so a flood is a few
 * hundred requests: 10 per second with bursts of 10 per callback method, 120 per address a minute.
 */
/** Every address below: Twilio's pool, the two single forgers and the twenty of the last test. */
const CLIENT_ADDRESSES = [
  '127.0.0.2',
  '127.0.0.3',
  '127.0.0.4',
  '127.0.0.5',
  '127.0.0.6',
  ...Array.from({ length: 20 }, (_, i) => `127.0.1.${10 + i}`),
];
/**
 * Decided on this machine, as the tests are collected: where those addresses cannot be bound (macOS
 * without loopback aliases) the tests are skipped, and the reason is printed.
 */
const cannotRun = unbindableLoopbackReason(CLIENT_ADDRESSES);
if (cannotRun) console.warn(`carrier-flood.test.ts skipped: ${cannotRun}`);
const describeWhereBindable = cannotRun ? describe.skip : describe;

const TOKEN = 'e2e-flood-auth-token';
const PUBLIC_URL = 'https://carrier-flood.example.test';
const e2e = useLocalRuntime({
  args: [
    '--twilio-auth-token',
    TOKEN,
    '--public-url',
    PUBLIC_URL,
    '--callback-rate-limit',
    '10',
    '--callback-burst-limit',
    '10',
    '--callback-limit-per-address',
    '120',
  ],
});

const DEMO_NUMBER = '+15005550006';
/** Twilio posts from a pool of addresses; one per test keeps each under its own per-address limit. */
const TWILIO_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
/**
 * What docs/deploy.md tells the operator to configure as the number's messaging webhook (and what the service sets on
 * its texts).
 */
const INBOUND_WITH_OVERRIDES = `${carrierRoutes.twilioSmsInbound.path}#ct=2000&rt=5000&tt=15000&rc=5&rp=all`;
/** Twilio's default: one retry, and only when it could not connect. */
const INBOUND_WITHOUT_RETRIES = `${carrierRoutes.twilioSmsInbound.path}#rc=0`;

let target: { runtimeRoot: string; signedRoot: string; authToken: string };
beforeAll(() => {
  target = { runtimeRoot: e2e.runtime.baseUrl.replace(/\/api\/v1$/, ''), signedRoot: PUBLIC_URL, authToken: TOKEN };
});

const newNumber = () => `+1415${String(randomBytes(4).readUInt32BE() % 10_000_000).padStart(7, '0')}`;

const stopFrom = (from: string) => {
  const sid = `SM${randomBytes(16).toString('hex')}`;
  return {
    MessageSid: sid,
    SmsMessageSid: sid,
    AccountSid: 'AC00000000000000000000000000000000',
    From: from,
    To: DEMO_NUMBER,
    Body: 'STOP',
    NumMedia: '0',
  };
};

/**
 * A forged callback: a STOP for someone else's number, with a missing, malformed or well-formed but wrong signature.
 */
function forge(localAddress: string, signature: string | null) {
  const params = stopFrom(newNumber());
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (signature !== null) headers['X-Twilio-Signature'] = signature;
  return postFrom(
    localAddress,
    `${target.runtimeRoot}${carrierRoutes.twilioSmsInbound.path}`,
    headers,
    new URLSearchParams(params).toString(),
  );
}

/** A signature of the right shape that does not verify: signed with another token. */
const wrongSignature = () =>
  twilioSignature(`${PUBLIC_URL}${carrierRoutes.twilioSmsInbound.path}`, stopFrom(newNumber()), 'not-the-token');

/** `count` requests made by `make`, at most `parallel` at a time. */
async function flood<T>(count: number, parallel: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += parallel) {
    results.push(
      ...(await Promise.all(Array.from({ length: Math.min(parallel, count - start) }, (_, i) => make(start + i)))),
    );
  }
  return results;
}

/**
 * Who refused each forged request: the edge's signature rule, the function's HMAC check, the address limit or the
 * throttle.
 */
function refusedBy({ status, body }: { status: number; body: string }): string {
  const { error = '', code = '' } = body.startsWith('{') ? (JSON.parse(body) as { error?: string; code?: string }) : {};
  if (status === 403 && code === 'invalid_signature')
    return /not a signature/.test(error) ? 'edge: no signature' : 'function: signature';
  if (status === 429 && code === 'rate_limited')
    return /from this address/.test(error) ? 'edge: address limit' : 'throttle';
  return `${status} ${code}`;
}

const tally = (answers: { status: number; body: string }[]) =>
  answers
    .map(refusedBy)
    .reduce<Record<string, number>>((counts, by) => ({ ...counts, [by]: (counts[by] ?? 0) + 1 }), {});

/** The STOP is on record: the inbound text is in the number's conversation and a send to it is refused. */
async function expectOptedOut(number: string): Promise<void> {
  const conversation = await e2e.api.get(`/messages/${encodeURIComponent(number)}`, e2e.runtime.demoKey);
  expect(conversation.body.messages).toEqual([expect.objectContaining({ direction: 'inbound', body: 'STOP' })]);
}

describeWhereBindable('genuine carrier callbacks under a flood of forged ones', () => {
  it('refuses an unsigned or malformed flood at the edge without spending the callback throttle', async () => {
    // Act: 400 requests from one address, far over the burst of 10 and the 120 per address
    const forged = await flood(400, 40, (i) => forge('127.0.0.5', i % 2 ? null : 'forged-signature'));
    // ...then at once a burst's worth of genuine STOPs, each tried once only
    const numbers = Array.from({ length: 10 }, newNumber);
    const genuine = await Promise.all(
      numbers.map((n) =>
        deliverAsTwilio(target, INBOUND_WITHOUT_RETRIES, stopFrom(n), {
          localAddress: TWILIO_ADDRESSES[0],
          retryPauseMs: 0,
        }),
      ),
    );

    // Assess: had the flood taken tokens, the bucket would be empty and these would be 429
    expect(tally(forged)).toEqual({ 'edge: no signature': 400 });
    expect(genuine.map((d) => d.statuses)).toEqual(numbers.map(() => [200]));
    for (const number of numbers) await expectOptedOut(number);
  });

  it('cuts off one address forging signatures, while Twilio delivers every STOP, retrying what the throttle refused', async () => {
    // Act: 200 well-formed forgeries from one address, and 10 genuine STOPs alongside
    const numbers = Array.from({ length: 10 }, newNumber);
    const [forged, genuine] = await Promise.all([
      flood(200, 20, () => forge('127.0.0.6', wrongSignature())),
      Promise.all(
        numbers.map((n) =>
          deliverAsTwilio(target, INBOUND_WITH_OVERRIDES, stopFrom(n), {
            localAddress: TWILIO_ADDRESSES[1],
            retryPauseMs: 500,
          }),
        ),
      ),
    ]);

    // Assess: past its 120 a minute the forger is refused at the edge; before that the function refused its signatures
    const counts = tally(forged);
    expect(counts['edge: address limit']).toBeGreaterThanOrEqual(80);
    expect((counts['function: signature'] ?? 0) + (counts.throttle ?? 0)).toBeLessThanOrEqual(120);
    expect(genuine.every((d: TwilioDelivery) => d.delivered)).toBe(true);
    for (const number of numbers) await expectOptedOut(number);
  });

  it('lands every STOP through a forged flood from many addresses that uses up the throttle, because Twilio retries', async () => {
    // Act: 20 addresses forge up to 15 requests each (under their own limit), 20 at a time; the
    // moment the throttle refuses one (its bucket is empty), 20 genuine STOPs arrive while the
    // flood goes on for 60 more requests: a burst, as long as Twilio's retries last or shorter
    let throttled!: () => void;
    let sentAfterEmpty = -1;
    const bucketEmpty = new Promise<void>((resolve) => (throttled = resolve));
    const forgedFlood = flood(300, 20, async (i) => {
      if (sentAfterEmpty >= 60) return undefined;
      if (sentAfterEmpty >= 0) sentAfterEmpty += 1;
      const answer = await forge(`127.0.1.${10 + (i % 20)}`, wrongSignature());
      if (refusedBy(answer) === 'throttle' && sentAfterEmpty < 0) {
        sentAfterEmpty = 0;
        throttled();
      }
      return answer;
    });
    const numbers = Array.from({ length: 20 }, newNumber);
    await bucketEmpty;
    const genuine = await Promise.all(
      numbers.map((n) =>
        deliverAsTwilio(target, INBOUND_WITH_OVERRIDES, stopFrom(n), {
          localAddress: TWILIO_ADDRESSES[2],
          retryPauseMs: 700,
        }),
      ),
    );
    const forged = (await forgedFlood).filter((answer) => answer !== undefined);

    // Assess: the flood did exhaust the throttle, genuine callbacks were refused by it, and retries landed them all
    const counts = tally(forged);
    expect(counts['edge: address limit']).toBeUndefined();
    expect(counts.throttle).toBeGreaterThan(0);
    expect(counts['function: signature']).toBeGreaterThan(0);
    expect(genuine.filter((d) => d.statuses[0] === 429).length).toBeGreaterThan(0);
    expect(genuine.every((d) => d.delivered)).toBe(true);
    for (const number of numbers) await expectOptedOut(number);
  }, 60_000);
});
