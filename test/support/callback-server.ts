import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { toProxyEvent } from '../../local/proxy-event';
import type { CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import { lambdaContext } from './api-event';

type CallbackHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The carrier's callback routes over real HTTP, as API Gateway serves them: the request becomes a
 * REST proxy event (local/proxy-event.ts, the local runtime's builder) for the route's handler.
 * For suites that need a real carrier to call back without the whole local runtime.
 */
export async function startCallbackServer(
  routes: readonly { route: CarrierRouteSpec; handler: CallbackHandler }[],
): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?');
        const found = routes.find(({ route }) => route.path === rawPath && route.method === req.method);
        if (!found) {
          res.writeHead(404).end();
          return;
        }
        const requestId = randomUUID();
        const event = toProxyEvent({
          request: {
            method: req.method!,
            rawPath,
            rawQuery,
            rawHeaders: req.rawHeaders,
            body: Buffer.concat(chunks).toString('utf8'),
            sourceIp: '127.0.0.1',
          },
          resource: found.route.path,
          pathParameters: null,
          authorizer: null,
          requestId,
          stage: 'prod',
          now: new Date(),
        });
        try {
          const result = await found.handler(event, lambdaContext);
          res.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
        } catch {
          res.writeHead(502).end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
