import 'aws-sdk-client-mock-jest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { principalToContext } from '../../lambdas/contexts/tenants/auth';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX, type RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { toProxyEvent } from '../../local/proxy-event';
import { aPrincipal, bodyOf, lambdaContext } from '../support/api-event';
import getEventFixture from '../fixtures/aws/rest-proxy-event-get.json';
import postEventFixture from '../fixtures/aws/rest-proxy-event-post.json';

// POST /messages builds its carrier at load; no text is sent here (the organization has no SMS number).
jest.mock('../../lambdas/contexts/carrier/create-carrier', () => ({
  createCarrier: () => ({ name: 'twilio', send: jest.fn() }),
}));

/**
 * Every route's handler on events made from the ones AWS documents (test/fixtures/aws/README.md),
 * and the local event builder held to their shape: if the builder drifted from AWS, the handlers
 * could pass on the laptop and fail on AWS.
 */ import { batchGetAnswerOf } from '../support/batch-get-answer';

const ddb = mockClient(DynamoDBDocumentClient);
const principal = aPrincipal();
const tenantRow = {
  pk: `T#${principal.tenant.id}`,
  sk: 'TENANT',
  id: principal.tenant.id,
  name: 'Acme',
  slug: 'acme',
  plan: 'pro',
  billingStatus: 'active',
};

// GET /docs reads the page the build writes; a small stand-in here (its content is reference-page.test.ts's).
const pageDir = mkdtempSync(join(tmpdir(), 'aws-events-'));
beforeAll(() => {
  writeFileSync(join(pageDir, 'index.html'), '<!doctype html><html><body>API reference</body></html>');
  process.env.REFERENCE_PAGE_PATH = join(pageDir, 'index.html');
});
afterAll(() => {
  delete process.env.REFERENCE_PAGE_PATH;
  rmSync(pageDir, { recursive: true, force: true });
});

beforeEach(() => {
  ddb.reset();
  // An empty organization: no rows but its own, the first request of the key's minute.
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(GetCommand).resolves({});
  ddb.on(GetCommand, { Key: { pk: tenantRow.pk, sk: 'TENANT' } }).resolves({ Item: tenantRow });
  ddb.on(TransactWriteCommand).resolves({});
  // A batch read answers the organization's own row when it asks for it (a send reads it with its key and thread).
  ddb.on(BatchGetCommand).callsFake(batchGetAnswerOf(tenantRow));
});

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const handlerOf = async (route: RouteSpec): Promise<Handler> =>
  ((await import(`../../${route.handler.replace(/\.ts$/, '')}`)) as { handler: Handler }).handler;

/**
 * AWS's GET example (or its POST example for a route with a body) turned into a request of
 * `route` on the documented execute-api stage: path parameters percent-encoded as sent, the
 * authorizer's context as API Gateway passes it (strings, plus principalId).
 */
function awsEvent(
  route: RouteSpec,
  init: { rawParameters?: Record<string, string>; body?: unknown } = {},
): APIGatewayProxyEvent {
  const fixture = structuredClone(
    init.body === undefined ? getEventFixture : postEventFixture,
  ) as unknown as APIGatewayProxyEvent;
  const path = `${API_PREFIX}${route.path.replace(/\{(\w+)\}/g, (_m, name: string) => init.rawParameters?.[name] ?? '')}`;
  return {
    ...fixture,
    resource: `${API_PREFIX}${route.path}`,
    path,
    httpMethod: route.method,
    pathParameters: init.rawParameters ?? null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    body: init.body === undefined ? null : JSON.stringify(init.body),
    requestContext: {
      ...fixture.requestContext,
      resourcePath: `${API_PREFIX}${route.path}`,
      httpMethod: route.method,
      path: `/${fixture.requestContext.stage}${path}`,
      authorizer:
        route.auth === null
          ? undefined
          : { ...principalToContext(principal), principalId: principal.apiKey.id, integrationLatency: 21 },
    },
  };
}

const contactId = '0199a000-0000-7000-8000-0000000000c1';
const callId = '0199a000-0000-7000-8000-0000000000d1';
const counterpart = '%2B14155550123';
const messageId = '0199a000-0000-7000-8000-0000000000e1';

/** Each route on an empty organization: what a request that AWS delivers must answer. */
const CASES: Record<string, { rawParameters?: Record<string, string>; body?: unknown; status: number }> = {
  getOpenApi: { status: 200 },
  getApiReference: { status: 200 },
  getMe: { status: 200 },
  listCalls: { status: 200 },
  getCall: { rawParameters: { id: callId }, status: 404 },
  listContacts: { status: 200 },
  createContact: { body: { displayName: 'Ada', phoneNumber: '+14155550100' }, status: 201 },
  getContact: { rawParameters: { id: contactId }, status: 404 },
  updateContact: { rawParameters: { id: contactId }, body: { tag: 'vip' }, status: 404 },
  deleteContact: { rawParameters: { id: contactId }, status: 404 },
  upsertContacts: { body: { contacts: [{ displayName: 'Ada', phoneNumber: '+14155550100' }] }, status: 200 },
  deleteContacts: { body: { contacts: [{ id: contactId }, { externalId: 'crm-1' }] }, status: 200 },
  listThreads: { status: 200 },
  sendMessage: { body: { to: '+14155550123', body: 'Hello' }, status: 409 },
  listMessages: { rawParameters: { counterpart }, status: 200 },
  // The segment holds a message id for these two: none exists on an empty organization.
  cancelMessage: { rawParameters: { counterpart: messageId }, status: 404 },
  rescheduleMessage: {
    rawParameters: { counterpart: messageId },
    body: { sendAt: new Date(Date.now() + 3_600_000).toISOString() },
    status: 404,
  },
  // AWS's GET example has no query string: refused, naming the number it needs.
  getConsent: { status: 400 },
  recordConsent: { body: { phoneNumber: '+14155550123', status: 'opted_out', source: 'email' }, status: 200 },
};

describe('every route on the events AWS documents', () => {
  it('has a case for every route of the manifest', () => {
    expect(Object.keys(CASES).sort()).toEqual(ROUTES.map((route) => route.operationId).sort());
  });

  it.each(ROUTES.map((route) => [route.operationId, route] as const))(
    '%s answers as it should, in the Error shape when refusing',
    async (operationId, route) => {
      const handler = await handlerOf(route);
      const { status, ...init } = CASES[operationId];

      const result = await handler(awsEvent(route, init), lambdaContext);

      expect(result.statusCode).toBe(status);
      if (status >= 400)
        expect(bodyOf(result)).toEqual(
          expect.objectContaining({ error: expect.any(String), code: expect.any(String) }),
        );
    },
  );

  it('decodes an encoded counterpart once: the same query as for the plain one', async () => {
    const route = ROUTES.find((r) => r.operationId === 'listMessages')!;
    const handler = await handlerOf(route);

    const encoded = await handler(awsEvent(route, { rawParameters: { counterpart: '%2B14155550123' } }), lambdaContext);
    const plain = await handler(awsEvent(route, { rawParameters: { counterpart: '+14155550123' } }), lambdaContext);

    expect([encoded.statusCode, plain.statusCode]).toEqual([200, 200]);
    expect(encoded.body).toBe(plain.body);
    const queries = ddb.commandCalls(QueryCommand).map((call) => JSON.stringify(call.args[0].input));
    expect(queries).toHaveLength(2);
    expect(queries[0]).toBe(queries[1]);
    expect(queries[0]).toContain('+14155550123');
  });

  it.each([
    ['listMessages', 'counterpart', '%E0%A4%A'],
    ['getContact', 'id', '%ZZ'],
    ['getCall', 'id', '0199a000%'],
  ])('%s answers a malformed escape with 400 naming the parameter', async (operationId, name, raw) => {
    const route = ROUTES.find((r) => r.operationId === operationId)!;
    const handler = await handlerOf(route);

    const event = awsEvent(route, { rawParameters: { [name]: raw } });
    const result = await handler(event, lambdaContext);

    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({
      error: `${name}: malformed percent-encoding in the path`,
      code: 'validation_failed',
      requestId: event.requestContext.requestId,
    });
  });

  it('refuses a counterpart encoded twice rather than decode it again', async () => {
    const route = ROUTES.find((r) => r.operationId === 'listMessages')!;
    const handler = await handlerOf(route);

    const result = await handler(
      awsEvent(route, { rawParameters: { counterpart: '%252B14155550123' } }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(400);
    expect(bodyOf(result).error).toMatch(/^counterpart: /);
  });
});

describe('the OpenAPI servers entry', () => {
  const route = ROUTES.find((r) => r.operationId === 'getOpenApi')!;
  const serversOf = async (event: APIGatewayProxyEvent) =>
    bodyOf(await (await handlerOf(route))(event, lambdaContext)).servers;

  it('names the execute-api stage URL, stage prefix included, for a request to it', async () => {
    const servers = await serversOf(awsEvent(route));

    expect(servers).toEqual([{ url: 'https://70ixmpl4fl.execute-api.us-east-2.amazonaws.com/Prod/api/v1' }]);
  });

  it('names the custom domain, without a stage, for a request to it', async () => {
    const event = awsEvent(route);
    event.headers = { ...event.headers, Host: 'api.example.com' };
    event.requestContext = { ...event.requestContext, domainName: 'api.example.com', path: event.path };

    expect(await serversOf(event)).toEqual([{ url: 'https://api.example.com/api/v1' }]);
  });

  it('names the local runtime with its port and scheme', async () => {
    const event = toProxyEvent({
      request: {
        method: 'GET',
        rawPath: '/api/v1/openapi.json',
        rawQuery: '',
        rawHeaders: ['Host', '127.0.0.1:3000'],
        body: null,
        sourceIp: '127.0.0.1',
        serverPort: 3000,
      },
      resource: '/api/v1/openapi.json',
      pathParameters: null,
      authorizer: null,
      requestId: 'r1',
      stage: 'local',
      now: new Date(),
    });

    expect(await serversOf(event)).toEqual([{ url: 'http://127.0.0.1:3000/api/v1' }]);
  });

  it('falls back to the relative /api/v1 for a Host that is no host name', async () => {
    const event = awsEvent(route);
    event.headers = { ...event.headers, Host: 'evil.example.com/"><script>' };

    expect(await serversOf(event)).toEqual([{ url: '/api/v1' }]);
  });
});

/** Every key path of a JSON value with the JSON type at it: `requestContext.identity.sourceIp string`. */
function shapeOf(value: unknown, at = ''): string[] {
  if (value === null) return [`${at} null`];
  if (Array.isArray(value)) return [`${at} array`];
  if (typeof value !== 'object') return [`${at} ${typeof value}`];
  return Object.entries(value).flatMap(([key, inner]) => shapeOf(inner, at ? `${at}.${key}` : key));
}

/** The keys whose content depends on the request (header names, query names, parameter names). */
const REQUEST_DEFINED =
  /^(headers|multiValueHeaders|queryStringParameters|multiValueQueryStringParameters|pathParameters|stageVariables)\./;

describe('the event builder of the local runtime and the tests', () => {
  const build = (request: Partial<Parameters<typeof toProxyEvent>[0]['request']> = {}) =>
    toProxyEvent({
      request: {
        method: 'GET',
        rawPath: '/',
        rawQuery: '',
        rawHeaders: ['Host', '127.0.0.1:3000', 'User-Agent', 'curl/8'],
        body: null,
        sourceIp: '127.0.0.1',
        ...request,
      },
      resource: '/',
      pathParameters: null,
      authorizer: null,
      requestId: 'r1',
      stage: 'local',
      now: new Date('2020-03-10T00:03:59.428Z'),
    });

  it('gives every field of the GET event AWS documents, each with the same JSON type', () => {
    const built = new Set(shapeOf(JSON.parse(JSON.stringify(build()))));
    const documented = shapeOf(getEventFixture).filter((entry) => !REQUEST_DEFINED.test(entry));

    expect(documented.filter((entry) => !built.has(entry))).toEqual([]);
  });

  it('gives the maps of the POST event AWS documents: single and multi-value, query decoded, body as text', () => {
    const event = build({
      method: 'POST',
      rawQuery: 'name=me&multivalueName=you&multivalueName=me',
      rawHeaders: ['Content-Type', 'application/json', 'headerName', 'headerValue'],
      body: Buffer.from('{\r\n\t"a": 1\r\n}'),
    });

    expect(event.queryStringParameters).toEqual(postEventFixture.queryStringParameters);
    expect(event.multiValueQueryStringParameters).toEqual(postEventFixture.multiValueQueryStringParameters);
    expect(event.multiValueHeaders).toMatchObject({
      'Content-Type': ['application/json'],
      headerName: ['headerValue'],
    });
    expect([event.body, event.isBase64Encoded]).toEqual([postEventFixture.body, postEventFixture.isBase64Encoded]);
  });

  it('writes requestTime as AWS does', () => {
    expect(build().requestContext.requestTime).toBe(getEventFixture.requestContext.requestTime);
  });
});
