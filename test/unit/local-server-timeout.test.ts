import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { GATEWAY_RESPONSES } from '../../lambdas/handlers/http/gateway-responses';
import { createApiServer, INTEGRATION_TIMEOUT_MS } from '../../local/server';

/**
 * The local runtime's API Gateway cuts a request its function has not answered within the
 * integration timeout with a 504, as API Gateway does at 29 s (the stack's DEFAULT_5XX body, its
 * status kept). The limit is shortened here; the function is held by a test hook until released.
 */
const slow = { method: 'GET', path: '/slow', operationId: 'slow', auth: null, scope: null } as unknown as RouteSpec;

let release: () => void = () => {};
let finished = false;
const slowHandler = async () => {
  await new Promise<void>((go) => (release = go));
  finished = true;
  return { statusCode: 200, body: '{}' };
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createApiServer({
    prefix: '/api/v1',
    stage: 'local',
    match: () => ({ kind: 'route', route: slow, pathParameters: null }),
    handlers: new Map([['slow', slowHandler]]),
    admitNetwork: () => true,
    authorize: async () => {
      throw new Error('no authorizer on this route');
    },
    tokenValidation: /.*/,
    logRequest: () => {},
    logError: () => {},
    integrationTimeoutMs: 200,
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/slow`;
});
afterAll(() => {
  release();
  server.closeAllConnections();
  return new Promise<void>((closed) => server.close(() => closed()));
});

describe('a function that has not answered within the integration timeout', () => {
  it('is cut with a 504 and the gateway’s 5xx body, and runs on', async () => {
    // Act
    const response = await fetch(url);

    // Assess: the gateway answered while the function was still held
    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ ...GATEWAY_RESPONSES.internal.body, requestId: expect.any(String) });
    expect(finished).toBe(false);
    release();
  });

  it('waits API Gateway’s 29 s by default', () => {
    expect(INTEGRATION_TIMEOUT_MS).toBe(29_000);
  });
});
