import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AUTHORIZATION_HEADER_REGEX } from '../../lambdas/contexts/tenants/api-key-format';
import type { RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { GATEWAY_RESPONSES } from '../../lambdas/handlers/http/gateway-responses';
import type { AuthorizerOutcome } from '../../local/authorizer';
import { createApiServer } from '../../local/server';

/**
 * The local runtime's API Gateway in front of the authorizer: the identity validation expression of
 * the CDK authorizer (`validationRegex`) refuses a malformed token with API Gateway's 401 before the
 * authorizer, or its cache, is asked.
 */
const getMe = { method: 'GET', path: '/me', operationId: 'getMe', auth: 'apiKey', scope: null } as unknown as RouteSpec;
const key = `cct_${randomBytes(32).toString('base64url')}`;
const authorize = jest.fn(
  async (): Promise<AuthorizerOutcome> => ({
    kind: 'policy',
    result: {
      principalId: 'k1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }],
      },
    },
    latencyMs: 1,
  }),
);

let server: Server;
let url: string;
beforeAll(async () => {
  server = createApiServer({
    prefix: '/api/v1',
    stage: 'local',
    match: () => ({ kind: 'route', route: getMe, pathParameters: null }),
    handlers: new Map([['getMe', async () => ({ statusCode: 200, body: '{}' })]]),
    admitNetwork: () => true,
    authorize,
    tokenValidation: new RegExp(AUTHORIZATION_HEADER_REGEX),
    logRequest: () => {},
    logError: () => {},
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/me`;
});
afterAll(() => new Promise<void>((closed) => server.close(() => closed())));
beforeEach(() => authorize.mockClear());

describe('a token the authorizer’s validation expression does not match', () => {
  it.each([
    ['another scheme', `Basic ${key}`],
    ['a key one character short', `Bearer ${key.slice(0, -1)}`],
    ['two keys', `Bearer ${key} ${key}`],
    ['a key of another format', 'Bearer not-a-key'],
  ])(
    'is answered 401 with WWW-Authenticate: Bearer and the Error body, the authorizer never asked: %s',
    async (_case, header) => {
      const response = await fetch(url, { headers: { Authorization: header } });

      expect(response.status).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toBe('Bearer');
      expect(await response.json()).toEqual({ ...GATEWAY_RESPONSES.unauthorized.body, requestId: expect.any(String) });
      expect(authorize).not.toHaveBeenCalled();
    },
  );

  it('lets every well-formed token through to the authorizer, the scheme in any case', async () => {
    const responses = await Promise.all(
      [`Bearer ${key}`, `bearer  ${key}`].map((header) => fetch(url, { headers: { Authorization: header } })),
    );

    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    expect(authorize).toHaveBeenCalledTimes(2);
  });
});

describe('idle keep-alive connections', () => {
  it('are kept a minute, as AWS keeps them, so a client (which closes its own after 4 s) never sends on one the server is closing', () => {
    // Node's defaults (5 s keep-alive) reset 3 requests in 66,187 of the bench's soak on a busy machine.
    expect(server.keepAliveTimeout).toBeGreaterThanOrEqual(60_000);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
  });
});
