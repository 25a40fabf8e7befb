import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RouteSpec } from '../lambdas/handlers/http/route-spec';
import type { CarrierRouteSpec } from '../lambdas/handlers/carrier/routes';
import type { AuthDecision, AuthorizerContext, Principal } from '../lambdas/contexts/tenants/auth';
import { GATEWAY_RESPONSES, type GatewayResponse } from '../lambdas/handlers/http/gateway-responses';
import type { ProxyHandler } from './handlers';
import { lambdaContext, toProxyEvent, type IncomingRequest } from './proxy-event';
import type { RouteMatch } from './router';

/** API Gateway's payload limit: larger requests never reach a handler. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** API Gateway's own integration timeout; the handler's context counts down from it. */
const INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * The carrier's callback routes, outside the API prefix: no authorizer (the handler checks the
 * provider's signature), the form body and query string handed over as received. `handlers` may
 * be filled after the server listens: their configuration needs the port it got.
 */
export type CallbackRoutes = {
  match: (method: string, rawPath: string) => RouteMatch<CarrierRouteSpec>;
  handlers: Map<string, ProxyHandler>;
};

export type ApiServerDeps = {
  prefix: string;
  stage: string;
  match: (method: string, rawPath: string) => RouteMatch<RouteSpec>;
  handlers: Map<string, ProxyHandler>;
  /** The per-network limit before anything else, as WAF runs before API Gateway: false refuses (429). */
  admitNetwork: (sourceIp: string) => boolean;
  /** The (cached) authorizer decision for an Authorization header. */
  authorize: (authorizationHeader: string) => Promise<AuthDecision>;
  toAuthorizerContext: (principal: Principal) => AuthorizerContext;
  callbacks?: CallbackRoutes;
  /** One line per request; never given keys, headers or bodies. */
  logRequest: (line: string) => void;
  logError: (message: string, error: unknown) => void;
};

type Outcome = { statusCode: number; headers: Record<string, string | string[]>; body: Buffer | string };

/** As API Gateway writes it, with the request id its template adds (lib/constructs/public-api.ts). */
const gateway = (response: GatewayResponse, requestId: string): Outcome => ({
  statusCode: response.statusCode,
  headers: { 'Content-Type': 'application/json', ...response.headers },
  body: JSON.stringify({ ...response.body, requestId }),
});

/** The body as a string (null when empty), or 'tooLarge' without buffering what is over the limit. */
function readBody(req: IncomingMessage): Promise<string | null | 'tooLarge'> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BYTES) {
    req.resume();
    return Promise.resolve('tooLarge');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        chunks.length = 0;
        resolve('tooLarge'); // the rest is drained and dropped
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(size === 0 ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fromHandlerResult(result: unknown): Outcome | undefined {
  const r = result as Partial<APIGatewayProxyResult> | undefined;
  if (!r || typeof r.statusCode !== 'number') return undefined;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(r.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(r.multiValueHeaders ?? {})) headers[name] = values.map(String);
  const body = r.body ?? '';
  return { statusCode: r.statusCode, headers, body: r.isBase64Encoded ? Buffer.from(body, 'base64') : body };
}

function splitUrl(url: string): { rawPath: string; rawQuery: string } {
  const at = url.indexOf('?');
  return at === -1 ? { rawPath: url, rawQuery: '' } : { rawPath: url.slice(0, at), rawQuery: url.slice(at + 1) };
}

async function invoke(handler: ProxyHandler | undefined, operationId: string, event: APIGatewayProxyEvent, stage: string): Promise<Outcome> {
  if (!handler) throw new Error(`No handler loaded for ${operationId}`);
  const context = lambdaContext({ functionName: `cct-${stage}-${operationId}`, awsRequestId: randomUUID(), timeoutMs: INTEGRATION_TIMEOUT_MS });
  const outcome = fromHandlerResult(await handler(event, context));
  if (!outcome) throw new Error(`${operationId} returned no statusCode`);
  return outcome;
}

/** A carrier callback: straight to its function, which verifies the signature and answers 403 itself. */
async function respondToCallback(
  deps: ApiServerDeps,
  callbacks: CallbackRoutes,
  match: Exclude<RouteMatch<CarrierRouteSpec>, { kind: 'notFound' }>,
  request: IncomingRequest,
  requestId: string,
): Promise<Outcome> {
  if (match.kind === 'methodNotAllowed') return gateway(GATEWAY_RESPONSES.methodNotAllowed, requestId);
  const { route } = match;
  const event = toProxyEvent({ request, resource: route.path, pathParameters: null, authorizer: null, requestId, stage: deps.stage, now: new Date() });
  return invoke(callbacks.handlers.get(route.operationId), route.operationId, event, deps.stage);
}

/** In API Gateway's order: the WAF's per-network limit, the payload limit, the route, the authorizer, the Lambda. */
async function respond(deps: ApiServerDeps, req: IncomingMessage, requestId: string): Promise<Outcome> {
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
  if (!deps.admitNetwork(sourceIp)) {
    req.resume();
    return gateway(GATEWAY_RESPONSES.throttled, requestId);
  }
  const body = await readBody(req);
  if (body === 'tooLarge') return gateway(GATEWAY_RESPONSES.requestTooLarge, requestId);
  const { rawPath, rawQuery } = splitUrl(req.url ?? '/');
  const request: IncomingRequest = { method: req.method ?? 'GET', rawPath, rawQuery, rawHeaders: req.rawHeaders, body, sourceIp };
  if (deps.callbacks) {
    // Its own resources outside the API prefix; a path that is none of them goes on to the API's routes.
    const callback = deps.callbacks.match(request.method, request.rawPath);
    if (callback.kind !== 'notFound') return respondToCallback(deps, deps.callbacks, callback, request, requestId);
  }
  const match = deps.match(request.method, request.rawPath);
  if (match.kind === 'notFound') return gateway(GATEWAY_RESPONSES.notFound, requestId);
  if (match.kind === 'methodNotAllowed') return gateway(GATEWAY_RESPONSES.methodNotAllowed, requestId);
  const { route } = match;

  let authorizer: AuthorizerContext | null = null;
  if (route.auth === 'apiKey') {
    // Like a TOKEN authorizer: no header at all is refused before the authorizer runs.
    const header = req.headers.authorization;
    if (!header) return gateway(GATEWAY_RESPONSES.unauthorized, requestId);
    const decision = await deps.authorize(header);
    if (decision.effect === 'deny') {
      return gateway(decision.reason === 'api_access_disabled' ? GATEWAY_RESPONSES.accessDenied : GATEWAY_RESPONSES.unauthorized, requestId);
    }
    authorizer = deps.toAuthorizerContext(decision.principal);
  }

  const event = toProxyEvent({
    request,
    resource: `${deps.prefix}${route.path}`,
    pathParameters: match.pathParameters,
    authorizer,
    requestId,
    stage: deps.stage,
    now: new Date(),
  });
  return invoke(deps.handlers.get(route.operationId), route.operationId, event, deps.stage);
}

/** The HTTP side of API Gateway: routing, the authorizer, the payload limit, gateway responses. */
export function createApiServer(deps: ApiServerDeps): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const started = Date.now();
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    const { rawPath } = splitUrl(req.url ?? '/');
    void (async () => {
      let outcome: Outcome;
      try {
        outcome = await respond(deps, req, requestId);
      } catch (err) {
        deps.logError(`${method} ${rawPath} failed (request ${requestId})`, err);
        outcome = gateway(GATEWAY_RESPONSES.internal, requestId);
      }
      res.writeHead(outcome.statusCode, { ...outcome.headers, 'x-amzn-RequestId': requestId });
      res.end(outcome.body);
      deps.logRequest(`${method} ${rawPath} ${outcome.statusCode} ${Date.now() - started}ms ${requestId}`);
    })();
  });
}
