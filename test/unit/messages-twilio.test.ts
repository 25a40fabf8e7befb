import { twilioErrorMessage } from '../../lambdas/contexts/carrier/internal/twilio-errors';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { createCarrier } from '../../lambdas/contexts/carrier/create-carrier';
import { CALLBACK_CONNECTION_OVERRIDES } from '../../lambdas/contexts/carrier/callback-protection';
import {
  deliveryStatusOfTwilio,
  TWILIO_SEND_TIMEOUT_MS,
  TwilioCarrier,
} from '../../lambdas/contexts/carrier/internal/twilio';
import { LoopbackCarrier } from '../../lambdas/contexts/carrier/loopback';

/** A stand-in for api.twilio.com on 127.0.0.1: records each request, answers as each test says. */
type Recorded = { method?: string; url?: string; headers: IncomingMessage['headers']; body: string };
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let answer: (res: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
});

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'test-auth-token';
const text = {
  tenantId: 't1',
  messageId: 'm1',
  from: '+14155550000',
  to: '+14155550100',
  body: 'Hello & welcome = 100%',
};
const carrier = (overrides: Partial<ConstructorParameters<typeof TwilioCarrier>[0]> = {}) =>
  new TwilioCarrier({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, baseUrl, ...overrides });

describe('the Twilio carrier', () => {
  it('posts a form-encoded message with Basic auth to the account Messages resource and returns the sid', async () => {
    // Prepare
    answer = json(201, { sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued' });
    // Act
    const receipt = await carrier({ statusCallbackUrl: 'https://api.example.com/carrier/status' }).send(text);
    // Assess
    expect(receipt).toEqual({ messageSid: 'SM0123456789abcdef0123456789abcdef' });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
    expect(request.headers.authorization).toBe(
      `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    );
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      To: '+14155550100',
      From: '+14155550000',
      Body: 'Hello & welcome = 100%',
      // Our message id rides on the callback URL, so a callback settles the text even if this answer is lost;
      // the fragment asks Twilio to retry a callback that fails (its connection overrides).
      StatusCallback: `https://api.example.com/carrier/status?messageId=m1#${CALLBACK_CONNECTION_OVERRIDES}`,
    });
  });

  it('keeps a configured connection-override fragment, last, instead of the default one, when it adds the message id to the StatusCallback URL', async () => {
    // Prepare
    answer = json(201, { sid: 'SM0123456789abcdef0123456789abcdef' });
    // Act
    await carrier({ statusCallbackUrl: 'https://api.example.com/prod/carrier/status#rc=5&rp=all' }).send(text);
    // Assess: Twilio reads the fragment as its connection overrides, so it must stay a fragment
    expect(new URLSearchParams(requests[0].body).get('StatusCallback')).toBe(
      'https://api.example.com/prod/carrier/status?messageId=m1#rc=5&rp=all',
    );
  });

  it("keeps the StatusCallback URL's own query parameters next to the message id", async () => {
    // Prepare
    answer = json(201, { sid: 'SM0123456789abcdef0123456789abcdef' });
    // Act
    await carrier({ statusCallbackUrl: 'https://api.example.com/carrier/status?stage=prod' }).send(text);
    // Assess
    expect(new URLSearchParams(requests[0].body).get('StatusCallback')).toBe(
      `https://api.example.com/carrier/status?stage=prod&messageId=m1#${CALLBACK_CONNECTION_OVERRIDES}`,
    );
  });

  it('sends no StatusCallback when none is configured', async () => {
    // Prepare
    answer = json(201, { sid: 'SM0123456789abcdef0123456789abcdef' });
    // Act
    await carrier().send(text);
    // Assess
    expect(new URLSearchParams(requests[0].body).has('StatusCallback')).toBe(false);
  });

  it('maps a 4xx about the text to a refusal with the provider code, naming neither body nor token', async () => {
    // Prepare
    answer = json(400, { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 });
    // Act
    const error = await carrier()
      .send(text)
      .catch((err: unknown) => err);
    // Assess
    expect(error).toBeInstanceOf(CarrierError);
    // Twilio's own words come along for the message.failed event; they are kept on the text, not in the error's
    // message.
    expect((error as CarrierError).details).toEqual({
      kind: 'refused',
      httpStatus: 400,
      providerCode: 21211,
      providerMessage: "The 'To' number is not a valid phone number.",
    });
    expect((error as CarrierError).message).not.toContain(text.body);
    expect((error as CarrierError).message).not.toContain(AUTH_TOKEN);
  });

  it('maps a 4xx it cannot read to a refusal without a provider code', async () => {
    // Prepare
    answer = (res) => res.writeHead(404, { 'Content-Type': 'text/html' }).end('<html>not found</html>');
    // Act
    const error = (await carrier()
      .send(text)
      .catch((err: unknown) => err)) as CarrierError;
    // Assess
    expect(error.details).toEqual({ kind: 'refused', httpStatus: 404, providerCode: undefined });
  });

  it('says the recipient opted out on Twilio 21610', async () => {
    // Prepare
    answer = json(400, { code: 21610, message: 'Attempt to send to unsubscribed recipient', status: 400 });
    // Act
    const error = (await carrier()
      .send(text)
      .catch((err: unknown) => err)) as CarrierError;
    // Assess
    // Without words of Twilio's, the title of its code.
    expect(error.details).toEqual({
      kind: 'refused',
      httpStatus: 400,
      providerCode: 21610,
      providerMessage: 'Attempt to send to unsubscribed recipient',
      recipientOptedOut: true,
    });
  });

  it('calls 429, 401 and 403 "not sent" (Twilio created nothing) and a 5xx "unknown" (it may have)', async () => {
    // Prepare
    const kinds: Record<number, string> = {};
    // Act
    for (const status of [429, 401, 403, 500, 502, 503]) {
      answer = json(status, { code: 20000 + status, message: 'no' });
      kinds[status] = (
        (await carrier()
          .send(text)
          .catch((err: unknown) => err)) as CarrierError
      ).details.kind;
    }
    // Assess
    expect(kinds).toEqual({
      429: 'not_sent',
      401: 'not_sent',
      403: 'not_sent',
      500: 'unknown',
      502: 'unknown',
      503: 'unknown',
    });
  });

  it.each([
    [
      'not JSON',
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>proxy</html>'),
      200,
    ],
    ['JSON without a sid', json(201, { status: 'queued' }), 201],
    ['an empty sid', json(201, { sid: '' }), 201],
  ])(
    'calls a success it cannot read (%s) unknown: the text may have been created',
    async (_name, reply, httpStatus) => {
      // Prepare
      answer = reply;
      // Act
      const sent = carrier().send(text);
      // Assess
      await expect(sent).rejects.toMatchObject({ name: 'CarrierError', details: { kind: 'unknown', httpStatus } });
    },
  );

  it('calls a carrier that does not answer in time unknown', async () => {
    // Prepare
    answer = () => undefined; // reads the request, never answers
    // Act
    const error = await carrier({ timeoutMs: 50 })
      .send(text)
      .catch((err: CarrierError) => err);
    // Assess
    expect(error).toMatchObject({
      name: 'CarrierError',
      message: 'Twilio did not answer in time',
      details: { kind: 'unknown' },
    });
    expect(requests).toHaveLength(1); // it did reach the carrier
  });

  it('calls a connection closed after the request was read ("other side closed") unknown', async () => {
    // Prepare
    answer = (res) => res.socket?.destroy(); // reads the request, then resets
    // Act
    const error = await carrier()
      .send(text)
      .catch((err: CarrierError) => err);
    // Assess
    expect(error).toMatchObject({
      name: 'CarrierError',
      message: "Twilio's answer was lost (UND_ERR_SOCKET)",
      details: { kind: 'unknown' },
    });
    expect(requests).toHaveLength(1);
  });

  it('calls a refused connection not sent', async () => {
    // Prepare: a port nothing listens on any more
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    // Act
    const error = await carrier({ baseUrl: `http://127.0.0.1:${closedPort}` })
      .send(text)
      .catch((err: CarrierError) => err);
    // Assess
    expect(error).toMatchObject({
      name: 'CarrierError',
      message: 'Twilio could not be reached (ECONNREFUSED)',
      details: { kind: 'not_sent' },
    });
  });

  describe('network failures, by the code fetch reports under its cause', () => {
    afterEach(() => jest.restoreAllMocks());
    const fetchFailing = (code: string) =>
      jest
        .spyOn(globalThis, 'fetch')
        .mockRejectedValue(new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) }));

    it.each([
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
      'CERT_HAS_EXPIRED',
      'ERR_TLS_CERT_ALTNAME_INVALID',
    ])('%s (no connection, or no request sent) is not sent', async (code) => {
      // Prepare
      fetchFailing(code);
      // Act
      const error = await carrier()
        .send(text)
        .catch((err: CarrierError) => err);
      // Assess
      expect(error).toMatchObject({
        name: 'CarrierError',
        message: `Twilio could not be reached (${code})`,
        details: { kind: 'not_sent' },
      });
    });

    it.each(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])('%s (the request may have arrived) is unknown', async (code) => {
      // Prepare
      fetchFailing(code);
      // Act
      const error = await carrier()
        .send(text)
        .catch((err: CarrierError) => err);
      // Assess
      expect(error).toMatchObject({
        name: 'CarrierError',
        message: `Twilio's answer was lost (${code})`,
        details: { kind: 'unknown' },
      });
    });

    it('an error without any code is unknown', async () => {
      // Prepare
      jest.spyOn(globalThis, 'fetch').mockRejectedValue(new TypeError('fetch failed'));
      // Act
      const error = await carrier()
        .send(text)
        .catch((err: CarrierError) => err);
      // Assess
      expect(error).toMatchObject({
        message: "Twilio's answer was lost (network error)",
        details: { kind: 'unknown' },
      });
    });
  });

  it('bounds a send at 5 s by default, well inside the 10 s function timeout', () => {
    // Assess
    expect(TWILIO_SEND_TIMEOUT_MS).toBe(5_000);
  });

  it("maps Twilio's statuses onto the message statuses", () => {
    // Act
    const statuses = ['queued', 'sending', 'sent', 'delivered', 'read', 'undelivered', 'failed', 'canceled'].map(
      deliveryStatusOfTwilio,
    );
    // Assess
    expect(statuses).toEqual([undefined, undefined, 'sent', 'delivered', 'delivered', 'failed', 'failed', 'failed']);
  });
});

describe('choosing the carrier from configuration', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('builds the configured carrier', async () => {
    // Prepare
    Object.assign(process.env, { CARRIER: 'twilio', TWILIO_ACCOUNT_SID: ACCOUNT_SID, TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    // Act
    const twilio = createCarrier();
    process.env.CARRIER = 'loopback';
    const loopback = createCarrier();
    // Assess
    expect(twilio).toBeInstanceOf(TwilioCarrier);
    expect(loopback).toBeInstanceOf(LoopbackCarrier);
    await (loopback as LoopbackCarrier).stop();
  });

  it('fails fast on a missing or unknown carrier, or missing credentials', () => {
    // Prepare, Act and Assess, one configuration at a time
    delete process.env.CARRIER;
    expect(() => createCarrier()).toThrow('CARRIER must be "twilio" or "loopback"');
    process.env.CARRIER = 'carrier-pigeon';
    expect(() => createCarrier()).toThrow('(got "carrier-pigeon")');
    Object.assign(process.env, { CARRIER: 'twilio', TWILIO_ACCOUNT_SID: ACCOUNT_SID });
    delete process.env.TWILIO_AUTH_TOKEN;
    expect(() => createCarrier()).toThrow('TWILIO_AUTH_TOKEN');
  });
});

describe("the carrier's words for a failure", () => {
  it("prefers Twilio's own words, then the title of its code, else nothing", () => {
    expect(twilioErrorMessage(30003, 'Handset\nunreachable  ')).toBe('Handset unreachable');
    expect(twilioErrorMessage(30003)).toBe('Unreachable destination handset');
    expect(twilioErrorMessage(30003, '   ')).toBe('Unreachable destination handset');
    expect(twilioErrorMessage(99999)).toBeUndefined();
    expect(twilioErrorMessage(undefined)).toBeUndefined();
    expect(twilioErrorMessage(undefined, 'x'.repeat(500))).toHaveLength(200);
  });
});
