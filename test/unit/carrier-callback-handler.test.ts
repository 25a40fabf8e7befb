import 'aws-sdk-client-mock-jest';
import { createHmac } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { callbackHandler, EMPTY_TWIML } from '../../lambdas/handlers/carrier/callback-handler';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import { smsInboundCallback, type CallbackKind } from '../../lambdas/contexts/carrier/callbacks';
import type { SmsInboundParams } from '../../lambdas/contexts/carrier/internal/callback-params';
import { statusCallbackUrlFor } from '../../lambdas/contexts/carrier/internal/twilio';
import { TemporarilyUnavailableError } from '../../lambdas/shared/errors';
import { lambdaContext } from '../support/api-event';
import { sid, smsInbound, type Form } from '../fixtures/twilio/callbacks';

const ddb = mockClient(DynamoDBDocumentClient);
/** The numbers registered, by number: a leg's numbers are read in one BatchGetItem (or a GetItem for one). */
const owners = new Map<string, string>();
beforeEach(() => {
  ddb.reset();
  owners.clear();
  ddb.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { pk: string }[] }> }) => {
    const [table, { Keys }] = Object.entries(input.RequestItems)[0];
    const rows = Keys.flatMap(({ pk }) => {
      const number = pk.slice('NUMBER_OWNER#'.length);
      const tenantId = owners.get(number);
      return tenantId ? [{ pk, sk: 'OWNER', tenantId, number }] : [];
    });
    return { Responses: { [table]: rows } };
  });
});

const TOKEN = 'test-auth-token';
const PUBLIC = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod';
const TENANT = '0199a000-0000-7000-8000-000000000001';
const ORG = '+14155550000';
const CUSTOMER = '+14155550199';
const route = carrierRoutes.twilioSmsInbound;
const url = `${PUBLIC}${route.path}`;

/** Twilio's signature, computed here rather than with the module under test. */
const sign = (signedUrl: string, form: Form, token = TOKEN) =>
  createHmac('sha1', token)
    .update(
      Object.keys(form)
        .sort()
        .reduce((acc, name) => acc + name + form[name], signedUrl),
    )
    .digest('base64');

const encode = (form: Form) => new URLSearchParams(form).toString();

function event(init: {
  body: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  base64?: boolean;
}): APIGatewayProxyEvent {
  return {
    httpMethod: 'POST',
    path: route.path,
    resource: route.path,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...init.headers },
    multiValueHeaders: {},
    queryStringParameters: init.query ?? null,
    multiValueQueryStringParameters: init.query
      ? Object.fromEntries(Object.entries(init.query).map(([k, v]) => [k, [v]]))
      : null,
    pathParameters: null,
    stageVariables: null,
    body: init.base64 ? Buffer.from(init.body).toString('base64') : init.body,
    isBase64Encoded: init.base64 ?? false,
    requestContext: { requestId: 'req-1' } as APIGatewayProxyEvent['requestContext'],
  };
}

/** smsInbound's own fields and clues, with the domain replaced by a spy. */
function spyKind() {
  const ingest = jest.fn<
    ReturnType<CallbackKind<SmsInboundParams>['ingest']>,
    Parameters<CallbackKind<SmsInboundParams>['ingest']>
  >();
  ingest.mockResolvedValue({ handled: true });
  return { kind: { ...smsInboundCallback, ingest }, ingest };
}

const form = smsInbound({ messageSid: sid('SM', 7), from: CUSTOMER, to: ORG, body: 'Running late & sorry!' });
const ownerOf = (number: string, tenantId: string) => {
  owners.set(number, tenantId);
  ddb.on(GetCommand, { Key: { pk: `NUMBER_OWNER#${number}`, sk: 'OWNER' } }).resolves({ Item: { tenantId, number } });
};

const handlerFor = (kind: CallbackKind<SmsInboundParams>, r: CarrierRouteSpec = route) =>
  callbackHandler(r, kind, {
    config: { authToken: TOKEN, publicBaseUrl: PUBLIC },
    now: () => new Date('2026-11-21T10:00:00Z'),
  });

describe('a signed callback', () => {
  it('reaches the domain with its fields and organization and is answered with empty TwiML', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result).toEqual({ statusCode: 200, headers: { 'Content-Type': 'text/xml' }, body: EMPTY_TWIML });
    expect(ingest).toHaveBeenCalledWith(
      { messageSid: sid('SM', 7), from: CUSTOMER, to: ORG, body: 'Running late & sorry!' },
      { tenantId: TENANT, orgNumbers: new Set([ORG]), via: 'number' },
      new Date('2026-11-21T10:00:00Z'),
    );
  });

  it('is accepted base64-encoded, in another field order and with the header in any case', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    const reordered = encode(form).split('&').reverse().join('&');
    // Act
    const result = await handlerFor(kind)(
      event({ body: reordered, base64: true, headers: { 'x-twilio-signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(200);
    expect(ingest).toHaveBeenCalledTimes(1);
  });

  it('answers an empty 200 on routes where Twilio expects no TwiML', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind } = spyKind();
    const statusRoute = { ...route, twiml: false };
    // Act
    const result = await handlerFor(kind, statusRoute)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result).toEqual({ statusCode: 200, headers: {}, body: '' });
  });

  it.each([
    ['the URL without its fragment', url],
    ['the URL with the connection overrides the service puts on it', `${url}#ct=2000&rt=5000&tt=15000&rc=5&rp=all`],
  ])('verifies a signature over %s (Twilio does not document which it signs)', async (_form, signedUrl) => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(signedUrl, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(200);
    expect(ingest).toHaveBeenCalledTimes(1);
  });

  it("verifies a text's status callback signed over its StatusCallback as sent, query and fragment included", async () => {
    // Prepare: the URL exactly as the Twilio carrier hands it to Twilio with the text
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    const messageId = '0199a000-0000-7000-8000-0000000000ff';
    const statusCallback = statusCallbackUrlFor(`${PUBLIC}${carrierRoutes.twilioSmsStatus.path}`, messageId);
    const statusRoute = { ...carrierRoutes.twilioSmsStatus };
    // Act
    const result = await handlerFor(kind, statusRoute)(
      {
        ...event({
          body: encode(form),
          query: { messageId },
          headers: { 'X-Twilio-Signature': sign(statusCallback, form) },
        }),
        path: statusRoute.path,
      },
      lambdaContext,
    );
    // Assess
    expect(statusCallback).toContain('#ct=');
    expect(result.statusCode).toBe(200);
    expect(ingest).toHaveBeenCalledTimes(1);
  });

  it('covers the tenantId of the callback URL, which names the organization when no number does', async () => {
    // Prepare: the number is nobody's; the organization exists.
    ddb.on(GetCommand).resolves({});
    ddb.on(GetCommand, { Key: { pk: `T#${TENANT}`, sk: 'TENANT' } }).resolves({ Item: { id: TENANT } });
    const { kind, ingest } = spyKind();
    const query = { tenantId: TENANT };
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), query, headers: { 'X-Twilio-Signature': sign(`${url}?tenantId=${TENANT}`, form) } }),
      lambdaContext,
    );
    const unsignedQuery = await handlerFor(kind)(
      event({ body: encode(form), query, headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(200);
    expect(ingest.mock.calls[0][1]).toEqual({ tenantId: TENANT, orgNumbers: new Set(), via: 'hint' });
    expect(unsignedQuery.statusCode).toBe(403);
  });
});

describe('what is refused', () => {
  it.each([
    ['a missing header', {}],
    [
      'a signature for another URL',
      { 'X-Twilio-Signature': sign('https://other.example.com/carrier/twilio/sms/inbound', form) },
    ],
    ['a signature made with another token', { 'X-Twilio-Signature': sign(url, form, 'not-the-token') }],
    [
      'a forged signature over the URL with the service fragment',
      { 'X-Twilio-Signature': sign(`${url}#ct=2000&rt=5000&tt=15000&rc=5&rp=all`, form, 'not-the-token') },
    ],
    [
      'a signature over the URL with a fragment other than the service one',
      { 'X-Twilio-Signature': sign(`${url}#rc=3`, form) },
    ],
  ])('refuses %s with 403, before any read or write', async (_case, headers) => {
    // Prepare
    const { kind, ingest } = spyKind();
    // Act
    const result = await handlerFor(kind)(event({ body: encode(form), headers }), lambdaContext);
    // Assess
    expect(result.statusCode).toBe(403);
    expect(JSON.parse(result.body)).toMatchObject({ code: 'invalid_signature' });
    expect(ingest).not.toHaveBeenCalled();
    expect(ddb.calls()).toHaveLength(0);
  });

  it('refuses a body that was changed after signing', async () => {
    // Prepare
    const { kind, ingest } = spyKind();
    const changed = encode({ ...form, Body: 'STOP' });
    // Act
    const result = await handlerFor(kind)(
      event({ body: changed, headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(403);
    expect(ingest).not.toHaveBeenCalled();
  });

  it('answers 400 to a body that is not a form, and to a signed form missing a field its kind needs', async () => {
    // Prepare
    const { kind, ingest } = spyKind();
    const { From: _from, ...withoutFrom } = form;
    // Act
    const json = await handlerFor(kind)(
      event({
        body: JSON.stringify(form),
        headers: { 'Content-Type': 'application/json', 'X-Twilio-Signature': sign(url, {}) },
      }),
      lambdaContext,
    );
    const missing = await handlerFor(kind)(
      event({ body: encode(withoutFrom), headers: { 'X-Twilio-Signature': sign(url, withoutFrom) } }),
      lambdaContext,
    );
    // Assess
    expect(json.statusCode).toBe(400);
    expect(missing.statusCode).toBe(400);
    expect(JSON.parse(missing.body)).toEqual({ code: 'validation_failed', error: expect.stringMatching(/^From: /) });
    expect(ingest).not.toHaveBeenCalled();
  });

  it('names a missing message sid once, with the names it may come under', async () => {
    // Prepare
    const { kind } = spyKind();
    const { MessageSid: _sid, SmsSid: _smsSid, ...withoutSid } = form as Form & { SmsSid?: string };
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(withoutSid), headers: { 'X-Twilio-Signature': sign(url, withoutSid) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body)).toEqual({
      code: 'validation_failed',
      error: 'MessageSid: is required (Twilio sends it as MessageSid or SmsSid)',
    });
  });

  it('answers 413 to a body far larger than any callback', async () => {
    // Prepare
    const { kind } = spyKind();
    const huge = encode({ ...form, Body: 'x'.repeat(70 * 1024) });
    // Act
    const result = await handlerFor(kind)(
      event({ body: huge, headers: { 'X-Twilio-Signature': 'irrelevant' } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(413);
  });
});

describe('callbacks that cannot be applied', () => {
  it('answers 200 with empty TwiML, changing nothing, when no organization registered the number', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    const { kind, ingest } = spyKind();
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result).toEqual({ statusCode: 200, headers: { 'Content-Type': 'text/xml' }, body: EMPTY_TWIML });
    expect(ingest).not.toHaveBeenCalled();
  });

  it('answers 503 with Retry-After when the rows kept changing under the domain, so Twilio retries it', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    ingest.mockRejectedValue(new TemporarilyUnavailableError('the thread kept changing'));
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(503);
    expect(result.headers).toEqual(expect.objectContaining({ 'Retry-After': '1' }));
    expect(JSON.parse(result.body)).toEqual(expect.objectContaining({ code: 'temporarily_unavailable' }));
  });

  it('answers 500 without details when the domain fails, so Twilio may retry', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ownerOf(ORG, TENANT);
    const { kind, ingest } = spyKind();
    ingest.mockRejectedValue(new Error('DynamoDB is having a bad day: +14155550199'));
    // Act
    const result = await handlerFor(kind)(
      event({ body: encode(form), headers: { 'X-Twilio-Signature': sign(url, form) } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('+1415');
  });
});
