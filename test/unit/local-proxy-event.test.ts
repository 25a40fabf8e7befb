import { lambdaContext, toProxyEvent, type EventInput } from '../../local/proxy-event';

const input = (request: Partial<EventInput['request']> = {}, rest: Partial<EventInput> = {}): EventInput => ({
  request: {
    method: 'GET',
    rawPath: '/api/v1/calls',
    rawQuery: '',
    rawHeaders: [],
    body: null,
    sourceIp: '127.0.0.1',
    ...request,
  },
  resource: '/api/v1/calls',
  pathParameters: null,
  authorizer: null,
  requestId: 'req-1',
  stage: 'local',
  now: new Date('2026-11-21T10:00:00Z'),
  ...rest,
});

describe('the API Gateway proxy event of the local runtime', () => {
  it('gives the last value of a repeated query parameter, all of them in the multi-value map', () => {
    const event = toProxyEvent(input({ rawQuery: 'limit=5&limit=7&direction=inbound' }));

    expect(event.queryStringParameters).toEqual({ limit: '7', direction: 'inbound' });
    expect(event.multiValueQueryStringParameters).toEqual({ limit: ['5', '7'], direction: ['inbound'] });
  });

  it('decodes query values like a form: + is a space and %2B a plus', () => {
    const event = toProxyEvent(input({ rawQuery: 'search=ada+lovelace&since=2026-01-01T00:00:00%2B02:00' }));

    expect(event.queryStringParameters).toEqual({ search: 'ada lovelace', since: '2026-01-01T00:00:00+02:00' });
  });

  it('has null query maps without a query string', () => {
    const event = toProxyEvent(input({ rawQuery: '' }));

    expect(event.queryStringParameters).toBeNull();
    expect(event.multiValueQueryStringParameters).toBeNull();
  });

  it('keeps header names as the client wrote them, the last value of a repeated one in headers', () => {
    const event = toProxyEvent(
      input({ rawHeaders: ['Content-Type', 'application/json', 'X-Trace', 'a', 'X-Trace', 'b'] }),
    );

    expect(event.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Trace': 'b' });
    expect(event.multiValueHeaders).toMatchObject({ 'Content-Type': ['application/json'], 'X-Trace': ['a', 'b'] });
  });

  it('adds the X-Forwarded headers API Gateway adds, appending the client to X-Forwarded-For', () => {
    const event = toProxyEvent(
      input({
        rawHeaders: ['x-forwarded-for', '198.51.100.7', 'X-Forwarded-Proto', 'https'],
        sourceIp: '127.0.0.1',
        serverPort: 3000,
      }),
    );

    expect(event.headers).toEqual({
      'X-Forwarded-For': '198.51.100.7, 127.0.0.1',
      'X-Forwarded-Port': '3000',
      'X-Forwarded-Proto': 'http',
    });
  });

  it('passes the body as text, null when there is none, base64 only for a binary media type of the API', () => {
    const json = Buffer.from('{"a":1}');
    const withBody = toProxyEvent(
      input({ method: 'POST', body: json, rawHeaders: ['Content-Type', 'application/json'] }),
    );
    const without = toProxyEvent(input());
    const binary = toProxyEvent(
      input(
        { method: 'POST', body: Buffer.from([0xff, 0x00]), rawHeaders: ['Content-Type', 'image/png'] },
        { binaryMediaTypes: ['image/*'] },
      ),
    );

    expect([withBody.body, withBody.isBase64Encoded]).toEqual(['{"a":1}', false]);
    expect(without.body).toBeNull();
    expect([binary.body, binary.isBase64Encoded]).toEqual(['/wA=', true]);
  });

  it('puts the authorizer context and request id where handlers read them', () => {
    const authorizer = { principalId: 'k1', context: { tenantId: 't1', keyId: 'k1' }, integrationLatency: 12 };
    const event = toProxyEvent(input({}, { authorizer, pathParameters: { id: 'c1' } }));

    expect(event.requestContext.authorizer).toEqual({
      tenantId: 't1',
      keyId: 'k1',
      principalId: 'k1',
      integrationLatency: 12,
    });
    expect(event.requestContext.requestId).toBe('req-1');
    expect(event.requestContext.requestTimeEpoch).toBe(Date.parse('2026-11-21T10:00:00Z'));
    expect(event.pathParameters).toEqual({ id: 'c1' });
  });

  it('gives routes without auth no authorizer context', () => {
    const event = toProxyEvent(input());

    expect(event.requestContext.authorizer).toBeNull();
  });
});

describe('the Lambda context of the local runtime', () => {
  it('counts the remaining time down from the timeout, never below 0', () => {
    let now = 5_000;
    const context = lambdaContext({
      functionName: 'cct-local-getMe',
      awsRequestId: 'aws-1',
      timeoutMs: 29_000,
      now: () => now,
    });

    const atStart = context.getRemainingTimeInMillis();
    now += 10_000;
    const later = context.getRemainingTimeInMillis();
    now += 60_000;
    const pastDeadline = context.getRemainingTimeInMillis();

    expect([atStart, later, pastDeadline]).toEqual([29_000, 19_000, 0]);
    expect(context).toMatchObject({ functionName: 'cct-local-getMe', awsRequestId: 'aws-1' });
  });
});
