import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { z } from 'zod/mini';
import { answerDeadline } from '../../shared/deadline';
import { principalFromContext, type Principal } from '../../contexts/tenants/auth';
import { InsufficientScopeError, RateLimitedError } from '../../contexts/tenants/errors';
import { consumeKeyBudget } from '../../contexts/tenants/rate-limit';
import { rateLimitHeaders, type RateLimitState } from '../../contexts/tenants/rate-limit-window';
import { logger, metrics, MetricUnit } from '../../shared/aws';
import { rateLimitPerKey } from '../../shared/config';
import { DomainError, NotFoundError } from '../../shared/errors';
import { toErrorResponse } from './error-mapper';
import { idempotencyKeyOf } from './idempotency';
import { toProxyResult, type ApiResponse } from './responses';
import type { RouteSpec } from './route-spec';
import { apiBaseUrlOf } from './served-url';
import { decodePathParameters, parseOrThrow } from './validation';

type Out<T> = T extends z.ZodMiniType ? z.output<T> : undefined;

/** What a handler receives: the caller and its already-validated input. Nothing else. */
export type ApiRequest<R extends RouteSpec> = {
  principal: R['auth'] extends null ? undefined : Principal;
  query: Out<R['query']>;
  path: Out<R['path_params']>;
  body: Out<R['body']>;
  headers: Record<string, string | undefined>;
  /** API Gateway's id of the request (its x-amzn-RequestId response header). */
  requestId: string;
  /**
   * When the answer must have left (epoch ms): API Gateway's 29 s from when it took the request, or the Lambda's own
   * timeout, whichever is sooner (shared/deadline.ts).
   */
  deadline: number;
  /** `{base_url}` as this caller reached it (./served-url.ts). */
  baseUrl: string;
  /** What is left of the function's time (the Lambda context's), for work that must finish within it. */
  remainingMs: () => number;
};

type ApiContext = Context & {
  principal?: Principal;
  input?: { query: unknown; path: unknown; body: unknown };
  /** The key's rate-limit verdict, started as soon as the caller is known. */
  rateLimit?: Promise<RateLimitState>;
};
type ApiMiddlewareRequest = Request<APIGatewayProxyEvent, ApiResponse | APIGatewayProxyResult, Error, ApiContext>;

/** A body larger than this is refused with 413 before it is parsed, unless the route sets its own (`maxBodyBytes`). */
export const MAX_BODY_BYTES = 64 * 1024;

const requestsPerKeyPerMinute = rateLimitPerKey();

const withRateLimit = (response: ApiResponse, state: RateLimitState | undefined): ApiResponse =>
  state ? { ...response, headers: { ...rateLimitHeaders(state), ...response.headers } } : response;

/** The verdict if one was started; a limiter failure is the request's failure (a 500). */
const verdictOf = (request: ApiMiddlewareRequest): Promise<RateLimitState | undefined> =>
  request.context.rateLimit ?? Promise.resolve(undefined);

/** True when the key is over its limit; counted, so operators see who runs into the limit. */
function countRefusal(state: RateLimitState | undefined): boolean {
  const refused = state !== undefined && !state.allowed;
  if (refused) metrics.addMetric('RateLimitedRequests', MetricUnit.Count, 1);
  return refused;
}

/**
 * Last in, first out: shapes every success and every error into the JSON response, with the
 * rate-limit headers on every response to an identified key. A read that ran alongside an
 * over-limit verdict is discarded for the 429.
 */
const respond = (): MiddlewareObj<APIGatewayProxyEvent, ApiResponse | APIGatewayProxyResult, Error, ApiContext> => ({
  before: (request) => {
    logger.appendKeys({ requestId: requestIdOf(request) });
  },
  after: async (request) => {
    const state = await verdictOf(request);
    const refused = countRefusal(state);
    const response = refused
      ? toErrorResponse(new RateLimitedError(state!.resetSeconds), requestIdOf(request))
      : (request.response as ApiResponse);
    request.response = toProxyResult(withRateLimit(response, state));
  },
  onError: async (request) => {
    const state = await verdictOf(request).catch(() => undefined);
    const error = countRefusal(state) ? new RateLimitedError(state!.resetSeconds) : request.error;
    request.response = toProxyResult(withRateLimit(toErrorResponse(error, requestIdOf(request)), state));
  },
});

/** API Gateway's id of the request: its x-amzn-RequestId response header (Lambda's own id is another). */
const requestIdOf = (request: ApiMiddlewareRequest): string =>
  request.event.requestContext?.requestId ?? request.context.awsRequestId;

/**
 * Counts the request against its key's minute. Reads (GET) overlap the counter update with their
 * own query; every other method waits for the verdict first, so an over-limit write changes nothing.
 */
const limitRate = (route: RouteSpec) => ({
  before: async (request: ApiMiddlewareRequest) => {
    const { tenant, apiKey } = request.context.principal!;
    const verdict = consumeKeyBudget(tenant.id, apiKey.id, requestsPerKeyPerMinute);
    verdict.catch(() => undefined); // observed later; keeps an early failure from being "unhandled"
    request.context.rateLimit = verdict;
    if (route.method !== 'GET') {
      const state = await verdict;
      if (!state.allowed) throw new RateLimitedError(state.resetSeconds);
    }
  },
});

/** The caller comes from the authorizer's context only, never from the request. */
const authenticate = () => ({
  before: (request: ApiMiddlewareRequest) => {
    const principal = principalFromContext(request.event.requestContext?.authorizer);
    logger.appendKeys({ tenantId: principal.tenant.id, keyId: principal.apiKey.id });
    request.context.principal = principal;
  },
});

/** After the limiter, so a request refused for its scope is counted and carries the rate-limit headers too. */
const requireScope = (route: RouteSpec) => ({
  before: (request: ApiMiddlewareRequest) => {
    if (route.scope && !request.context.principal!.scopes.includes(route.scope))
      throw new InsufficientScopeError(route.scope);
  },
});

/**
 * Before the JSON body parser: refuses an oversized body (413), and gives the parser the
 * content type under the name it looks for, since API Gateway REST keeps the client's header
 * case (`CONTENT-TYPE` is as valid as `content-type`).
 */
const prepareBody = (maxBytes: number) => ({
  before: (request: ApiMiddlewareRequest) => {
    const headers = (request.event.headers ??= {});
    const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    if (contentType !== undefined) headers['content-type'] = contentType;
    const body = request.event.body ?? '';
    const bytes = request.event.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body);
    if (bytes > maxBytes) {
      throw new DomainError(413, 'payload_too_large', `body: must be at most ${maxBytes} bytes`);
    }
  },
});

/**
 * Query, path and body through the route's zod schemas. Path parameters arrive percent-encoded
 * (API Gateway REST passes them as sent) and are decoded here, once; a malformed escape is 400
 * naming the parameter. A path parameter that cannot name a row (a malformed id) is 404, not 400:
 * no such row can exist, and the spec lists no 400 there.
 */
const validate = (route: RouteSpec) => ({
  before: (request: ApiMiddlewareRequest) => {
    const { event } = request;
    let path: unknown;
    const pathParameters = route.path_params ? decodePathParameters(event.pathParameters) : {};
    if (route.path_params && route.invalidPathStatus === 400) {
      // A path that is a value rather than an id (a phone number): 400 naming the parameter.
      path = parseOrThrow(route.path_params, pathParameters, 'path');
    } else if (route.path_params) {
      const parsed = route.path_params.safeParse(pathParameters);
      if (!parsed.success) throw new NotFoundError(route.operationId.replace(/^(get|update|delete)/, '') || 'Resource');
      path = parsed.data;
    }
    request.context.input = {
      query: route.query ? parseOrThrow(route.query, event.queryStringParameters ?? {}, 'query') : undefined,
      path,
      body: route.body ? parseOrThrow(route.body, event.body, 'body') : undefined,
    };
  },
});

/**
 * Builds a Lambda handler for one route of the manifest: the middleware chain owns logging
 * context, authentication, scope, body parsing, validation, error mapping and headers, so the
 * handler function only calls the domain and shapes the result.
 */
export function apiHandler<R extends RouteSpec>(route: R, fn: (request: ApiRequest<R>) => Promise<ApiResponse>) {
  const chain = middy<APIGatewayProxyEvent, ApiResponse | APIGatewayProxyResult, Error, ApiContext>({
    timeoutEarlyInMillis: 0,
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(respond());
  if (route.auth !== null) chain.use(authenticate()).use(limitRate(route)).use(requireScope(route));
  if (route.body) {
    chain.use(prepareBody(route.maxBodyBytes ?? MAX_BODY_BYTES));
    chain.use(httpJsonBodyParser({ disableContentTypeError: false }));
  }
  chain.use(validate(route));
  return chain.handler(async (event, context) => {
    const input = context.input!;
    return fn({
      principal: context.principal as ApiRequest<R>['principal'],
      query: input.query as Out<R['query']>,
      path: input.path as Out<R['path_params']>,
      body: input.body as Out<R['body']>,
      headers: event.headers ?? {},
      requestId: event.requestContext?.requestId ?? context.awsRequestId,
      deadline: answerDeadline(event.requestContext?.requestTimeEpoch, context.getRemainingTimeInMillis?.(), 0),
      baseUrl: apiBaseUrlOf(event),
      remainingMs: () => context.getRemainingTimeInMillis(),
    });
  }) as unknown as (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
}

/**
 * The request a write comes from, as the rows it changes record it for their events: API Gateway's request id and
 * the Idempotency-Key header (null when none was sent; 400 when malformed).
 */
export const requestOriginOf = (request: { requestId: string; headers: Record<string, string | undefined> }) => ({
  id: request.requestId,
  idempotencyKey: idempotencyKeyOf(request.headers) ?? null,
});
