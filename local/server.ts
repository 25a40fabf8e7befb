import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { posix } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RouteSpec } from '../lambdas/handlers/http/route-spec';
import type { CarrierRouteSpec } from '../lambdas/handlers/carrier/routes';
import {
  accessDeniedResponse,
  GATEWAY_RESPONSES,
  type GatewayResponse,
} from '../lambdas/handlers/http/gateway-responses';
import { methodArnOf, policyAllows, type AuthorizerOutcome } from './authorizer';
import type { CarrierCallbackGate } from './carrier-callback-gate';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../lambdas/shared/response-limit';
import type { ProxyHandler } from './handlers';
import { runInvocation } from './invocations';
import { lambdaContext, toProxyEvent, type GatewayAuthorization, type IncomingRequest } from './proxy-event';
import type { RouteMatch } from './router';
import { readBodyWithin } from './request-body';
import { compressResponse } from './response-compression';

/** API Gateway's payload limit: larger requests never reach a handler. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** API Gateway's own integration timeout; the handler's context counts down from it. */
export const INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * What API Gateway answers when the function has not answered within the integration timeout: its
 * INTEGRATION_TIMEOUT response, a DEFAULT_5XX, which the stack words as every 5xx it writes and
 * keeps at API Gateway's own status, 504 (lib/constructs/public-api.ts).
 */
const INTEGRATION_TIMED_OUT: GatewayResponse = { ...GATEWAY_RESPONSES.internal, statusCode: 504 };

/**
 * The carrier's callback routes, outside the API prefix: no authorizer (the handler checks the
 * provider's signature), the form body and query string handed over as received. `handlers` may
 * be filled after the server listens: their configuration needs the port it got.
 */
export type CallbackRoutes = {
  /** Where the WAF's callback rules apply instead of the per-network limit (e.g. `/carrier/twilio/`). */
  prefix: string;
  match: (method: string, rawPath: string) => RouteMatch<CarrierRouteSpec>;
  handlers: Map<string, ProxyHandler>;
  /** The WAF's callback rules and each method's throttle, before the function. */
  gate: CarrierCallbackGate;
};

export type ApiServerDeps = {
  prefix: string;
  stage: string;
  match: (method: string, rawPath: string) => RouteMatch<RouteSpec>;
  handlers: Map<string, ProxyHandler>;
  /** The per-network limit before anything else, as WAF runs before API Gateway: false refuses (429). */
  admitNetwork: (sourceIp: string) => boolean;
  /** The authorizer's (cached) result for an Authorization header, asked for a request's method ARN. */
  authorize: (authorizationHeader: string, methodArn: string) => Promise<AuthorizerOutcome>;
  /**
   * The authorizer's identity validation expression: a header it does not match is 401 without asking the authorizer.
   */
  tokenValidation: RegExp;
  callbacks?: CallbackRoutes;
  /** One line per request; never given keys, headers or bodies. */
  logRequest: (line: string) => void;
  logError: (message: string, error: unknown) => void;
  /** When the gateway stops waiting for a function and answers 504 (default 29 s; tests shorten it). */
  integrationTimeoutMs?: number;
};

/**
 * What the server sends. `integration`: a function's response (API Gateway's integration response),
 * the only kind API Gateway compresses; its own gateway responses are all far below the threshold.
 */
type Outcome = {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: Buffer | string;
  integration?: true;
};

/** As API Gateway writes it, with the request id its template adds (lib/constructs/public-api.ts). */
const gateway = (response: GatewayResponse, requestId: string): Outcome => ({
  statusCode: response.statusCode,
  headers: { 'Content-Type': 'application/json', ...response.headers },
  body: JSON.stringify({ ...response.body, requestId }),
});

/** 405 with the methods the path has, as the stack's mock integration answers (RFC 9110 requires Allow). */
function methodNotAllowed(allow: readonly string[], requestId: string): Outcome {
  const outcome = gateway(GATEWAY_RESPONSES.methodNotAllowed, requestId);
  return { ...outcome, headers: { ...outcome.headers, Allow: allow.join(', ') } };
}

const readBody = (req: IncomingMessage) => readBodyWithin(req, MAX_REQUEST_BYTES);

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

/** An operation's function as its Lambda context names it locally: one function per operation, as in AWS. */
export const functionNameOf = (stage: string, operationId: string): string => `cct-${stage}-${operationId}`;

/**
 * The function's answer, or API Gateway's 504 once `timeoutMs` has passed without one. As on AWS, the
 * function is not stopped: it runs on, and what it writes afterwards is written.
 */
async function invoke(
  handler: ProxyHandler | undefined,
  operationId: string,
  event: APIGatewayProxyEvent,
  stage: string,
  timeoutMs = INTEGRATION_TIMEOUT_MS,
): Promise<Outcome> {
  if (!handler) throw new Error(`No handler loaded for ${operationId}`);
  const context = lambdaContext({
    functionName: functionNameOf(stage, operationId),
    awsRequestId: randomUUID(),
    timeoutMs,
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<typeof TIMED_OUT>((cut) => (timer = setTimeout(() => cut(TIMED_OUT), timeoutMs)));
  // An invocation of its own: the function's log records carry its context and keys, not another's.
  const running = runInvocation(() => handler(event, context), context.awsRequestId);
  running.catch(() => undefined); // after a cut, its failure has no one to answer
  const result = await Promise.race([running, timedOut]).finally(() => clearTimeout(timer));
  if (result === TIMED_OUT) return gateway(INTEGRATION_TIMED_OUT, event.requestContext.requestId);
  // Lambda refuses a response over 6 MB and API Gateway answers 5xx: so does the laptop.
  const bytes = Buffer.byteLength(JSON.stringify(result ?? null), 'utf8');
  if (bytes > LAMBDA_RESPONSE_LIMIT_BYTES)
    throw new Error(`${operationId} answered ${bytes} bytes, over Lambda's response limit`);
  const outcome = fromHandlerResult(result);
  if (!outcome) throw new Error(`${operationId} returned no statusCode`);
  return { ...outcome, integration: true };
}

const TIMED_OUT = Symbol('timed out');

/** The path as WAF compares it: percent-decoded and normalised, so `..` cannot reach under (or out of) a prefix. */
function normalisedPath(rawPath: string): string {
  let decoded = rawPath;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    // WAF's URL_DECODE leaves a malformed escape as it is
  }
  return posix.normalize(decoded);
}

/**
 * A request under the carrier's callback prefix, in AWS's order: the WAF's callback rules (the
 * signature's shape, the per-address limit), the payload limit, the route, the method's throttle,
 * then the function, which verifies the signature and answers 403 itself.
 */
async function respondToCallback(
  deps: ApiServerDeps,
  callbacks: CallbackRoutes,
  req: IncomingMessage,
  requestId: string,
): Promise<Outcome> {
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
  const method = req.method ?? 'GET';
  const { rawPath, rawQuery } = splitUrl(req.url ?? '/');
  const match = callbacks.match(method, rawPath);
  const signature = req.headers['x-twilio-signature'];
  const answer = callbacks.gate.admit({
    sourceIp,
    signature: Array.isArray(signature) ? signature[0] : signature,
    method: match.kind === 'route' ? `${method} ${match.route.path}` : undefined,
  });
  if (!answer.admitted) {
    req.resume();
    if (answer.by === 'throttle') return gateway(GATEWAY_RESPONSES.throttled, requestId);
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (answer.by === 'address') headers['Retry-After'] = String(answer.retryAfterSeconds);
    return { statusCode: answer.statusCode, headers, body: JSON.stringify(answer.body) };
  }
  const body = await readBody(req);
  if (body === 'tooLarge') return gateway(GATEWAY_RESPONSES.requestTooLarge, requestId);
  if (match.kind === 'notFound') return gateway(GATEWAY_RESPONSES.notFound, requestId);
  if (match.kind === 'methodNotAllowed') return methodNotAllowed(match.allow, requestId);
  const { route } = match;
  const request: IncomingRequest = {
    method,
    rawPath,
    rawQuery,
    rawHeaders: req.rawHeaders,
    body,
    sourceIp,
    serverPort: req.socket.localPort,
  };
  const event = toProxyEvent({
    request,
    resource: route.path,
    pathParameters: null,
    authorizer: null,
    requestId,
    stage: deps.stage,
    now: new Date(),
  });
  return invoke(callbacks.handlers.get(route.operationId), route.operationId, event, deps.stage);
}

/**
 * A TOKEN authorizer as API Gateway runs it: no header at all, or one its validation expression
 * does not match, is 401 before the authorizer runs (or its cache is looked at); "Unauthorized" is
 * 401; a policy (perhaps cached from another route's request) that does not allow this method ARN
 * is 403 ACCESS_DENIED, worded from the authorizer's context.
 */
async function authorizeRequest(
  deps: ApiServerDeps,
  header: string | undefined,
  request: IncomingRequest,
  requestId: string,
): Promise<GatewayAuthorization | Outcome> {
  if (!header || !deps.tokenValidation.test(header)) return gateway(GATEWAY_RESPONSES.unauthorized, requestId);
  const methodArn = methodArnOf(deps.stage, request.method, request.rawPath);
  const outcome = await deps.authorize(header, methodArn);
  if (outcome.kind === 'unauthorized') return gateway(GATEWAY_RESPONSES.unauthorized, requestId);
  const { result, latencyMs } = outcome;
  if (!policyAllows(result, methodArn)) return gateway(accessDeniedResponse(result.context ?? undefined), requestId);
  const context = Object.fromEntries(Object.entries(result.context ?? {}).map(([key, value]) => [key, String(value)]));
  return { principalId: result.principalId, context, integrationLatency: latencyMs };
}

/** In API Gateway's order: the WAF's per-network limit, the payload limit, the route, the authorizer, the Lambda. */
async function respond(deps: ApiServerDeps, req: IncomingMessage, requestId: string): Promise<Outcome> {
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
  const callbacks = deps.callbacks;
  // The carrier's callbacks have their own resources outside the API prefix and their own WAF rules.
  if (callbacks && normalisedPath(splitUrl(req.url ?? '/').rawPath).startsWith(callbacks.prefix)) {
    return respondToCallback(deps, callbacks, req, requestId);
  }
  if (!deps.admitNetwork(sourceIp)) {
    req.resume();
    return gateway(GATEWAY_RESPONSES.throttled, requestId);
  }
  const body = await readBody(req);
  if (body === 'tooLarge') return gateway(GATEWAY_RESPONSES.requestTooLarge, requestId);
  const { rawPath, rawQuery } = splitUrl(req.url ?? '/');
  const request: IncomingRequest = {
    method: req.method ?? 'GET',
    rawPath,
    rawQuery,
    rawHeaders: req.rawHeaders,
    body,
    sourceIp,
    serverPort: req.socket.localPort,
  };
  const match = deps.match(request.method, request.rawPath);
  if (match.kind === 'notFound') return gateway(GATEWAY_RESPONSES.notFound, requestId);
  if (match.kind === 'methodNotAllowed') return methodNotAllowed(match.allow, requestId);
  const { route } = match;

  let authorizer: GatewayAuthorization | null = null;
  if (route.auth === 'apiKey') {
    const authorized = await authorizeRequest(deps, req.headers.authorization, request, requestId);
    if ('statusCode' in authorized) return authorized;
    authorizer = authorized;
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
  return invoke(deps.handlers.get(route.operationId), route.operationId, event, deps.stage, deps.integrationTimeoutMs);
}

/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is about a client's own
 * (Node's fetch closes an idle socket after 4 s), so a busy client could send on a socket the server
 * was closing and get a reset with no answer: 3 requests in 66,187 of the bench's soak. AWS's front
 * ends keep an idle connection for a minute or more, so the client closes first, as against AWS.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The HTTP side of API Gateway: routing, the authorizer, the payload limit, gateway responses. */
export function createApiServer(deps: ApiServerDeps): Server {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
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
      // As API Gateway does with the API's minimumCompressionSize (lib/constructs/public-api.ts).
      const sent = outcome.integration ? await compressResponse(outcome, req.headers['accept-encoding']) : outcome;
      // A length, not chunks, as API Gateway sends every response (RFC 9110: none on a 204 or 304).
      const headers = Object.fromEntries(
        Object.entries(sent.headers).filter(([name]) => name.toLowerCase() !== 'content-length'),
      );
      const length =
        sent.statusCode === 204 || sent.statusCode === 304
          ? {}
          : { 'Content-Length': String(Buffer.byteLength(sent.body)) };
      res.writeHead(sent.statusCode, { ...headers, ...length, 'x-amzn-RequestId': requestId });
      res.end(sent.body);
      deps.logRequest(`${method} ${rawPath} ${outcome.statusCode} ${Date.now() - started}ms ${requestId}`);
    })();
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Node requires the headers timeout above the keep-alive one, or it cuts a reused connection's next request.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}
