import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * The Lambda proxy integration's input, built the way API Gateway REST (payload v1) builds it,
 * so the handlers run locally on exactly what they receive in AWS. The one builder: the local
 * runtime and the unit tests (test/support/api-event.ts) both use it, and
 * test/unit/aws-events.test.ts holds its output against the events AWS documents
 * (test/fixtures/aws/).
 */
export type IncomingRequest = {
  method: string;
  /** The path as sent, still percent-encoded, without the query string. */
  rawPath: string;
  /** The query string as sent, without `?`. */
  rawQuery: string;
  /** Node's `rawHeaders`: name, value, name, value... with the case the client used. */
  rawHeaders: string[];
  /** The bytes sent; null when the request had no body, as in API Gateway. */
  body: Buffer | string | null;
  sourceIp: string;
  /** The port the client reached (API Gateway's `X-Forwarded-Port`); omitted in tests. */
  serverPort?: number;
};

/** What a Lambda authorizer's allow gave API Gateway: its principal, its context, and how long it took. */
export type GatewayAuthorization = { principalId: string; context: Record<string, string>; integrationLatency: number };

export type EventInput = {
  request: IncomingRequest;
  /** The route's path template, e.g. `/api/v1/contacts/{id}`. */
  resource: string;
  /** As matched, still percent-encoded (null when the route has none). */
  pathParameters: Record<string, string> | null;
  /** The authorizer's result (null on routes without auth). */
  authorizer: GatewayAuthorization | null;
  requestId: string;
  stage: string;
  now: Date;
  /**
   * The API's binary media types: a body whose Content-Type matches one is passed base64-encoded
   * (`isBase64Encoded: true`), every other body as text. This API declares none.
   */
  binaryMediaTypes?: readonly string[];
  /**
   * The scheme the client reached the gateway on (`X-Forwarded-Proto`): http for the local runtime, https for API
   * Gateway.
   */
  scheme?: 'http' | 'https';
};

type MultiValue = Record<string, string[]>;

/** Single- and multi-value maps; the single map keeps the last value of a repeated name, as API Gateway does. */
function singleAndMulti(pairs: Iterable<[string, string]>): {
  single: Record<string, string> | null;
  multi: MultiValue | null;
} {
  const single: Record<string, string> = {};
  const multi: MultiValue = {};
  for (const [name, value] of pairs) {
    single[name] = value;
    (multi[name] ??= []).push(value);
  }
  return Object.keys(single).length === 0 ? { single: null, multi: null } : { single, multi };
}

function headerPairs(rawHeaders: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i], rawHeaders[i + 1]]);
  return pairs;
}

const named = (pairs: [string, string][], name: string) =>
  pairs.filter(([n]) => n.toLowerCase() === name.toLowerCase());

/**
 * The headers API Gateway adds before the integration: the client's address appended to
 * `X-Forwarded-For`, and the port and scheme it was reached on (the local runtime: plain http).
 */
function withForwardedHeaders(pairs: [string, string][], request: IncomingRequest, scheme: string): [string, string][] {
  const forwardedFor = named(pairs, 'X-Forwarded-For').map(([, value]) => value);
  const others = pairs.filter(([n]) => !/^x-forwarded-(for|port|proto)$/i.test(n));
  const added: [string, string][] = [['X-Forwarded-For', [...forwardedFor, request.sourceIp].join(', ')]];
  if (request.serverPort !== undefined) added.push(['X-Forwarded-Port', String(request.serverPort)]);
  added.push(['X-Forwarded-Proto', scheme]);
  return [...others, ...added];
}

/**
 * Query values are decoded like a form (`+` is a space, `%2B` is a plus), which is what API
 * Gateway REST does: an ISO offset such as `+02:00` must be sent as `%2B02:00`.
 */
const queryPairs = (rawQuery: string): [string, string][] => [...new URLSearchParams(rawQuery)];

/** `*\/*`, `image/*` or an exact type, against the request's Content-Type (parameters ignored). */
function isBinary(contentType: string | undefined, binaryMediaTypes: readonly string[]): boolean {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  if (!type) return false;
  return binaryMediaTypes.some((pattern) => {
    const [major, minor] = pattern.toLowerCase().split('/');
    const [typeMajor, typeMinor] = type.split('/');
    return (major === '*' || major === typeMajor) && (minor === '*' || minor === typeMinor);
  });
}

function bodyOf(request: IncomingRequest, contentType: string | undefined, binaryMediaTypes: readonly string[]) {
  if (request.body === null) return { body: null, isBase64Encoded: false };
  const bytes = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  return isBinary(contentType, binaryMediaTypes)
    ? { body: bytes.toString('base64'), isBase64Encoded: true }
    : { body: bytes.toString('utf8'), isBase64Encoded: false };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `$context.requestTime`, in the common log format: `10/Mar/2020:00:03:59 +0000`. */
export function requestTime(now: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${two(now.getUTCDate())}/${MONTHS[now.getUTCMonth()]}/${now.getUTCFullYear()}:` +
    `${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())} +0000`
  );
}

/** The caller's identity as API Gateway gives it to a function behind a custom authorizer: the address and agent. */
function identityOf(sourceIp: string, userAgent: string | null): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    sourceIp,
    user: null,
    userAgent,
    userArn: null,
  };
}

export function toProxyEvent(input: EventInput): APIGatewayProxyEvent {
  const { request, resource, pathParameters, authorizer, requestId, stage, now } = input;
  const pairs = withForwardedHeaders(headerPairs(request.rawHeaders), request, input.scheme ?? 'http');
  const headers = singleAndMulti(pairs);
  const query = singleAndMulti(queryPairs(request.rawQuery));
  const last = (name: string) => named(pairs, name).at(-1)?.[1];
  const host = last('Host') ?? 'localhost';
  const domainName = host.replace(/:\d+$/, '');
  return {
    resource,
    path: request.rawPath,
    httpMethod: request.method,
    headers: headers.single ?? {},
    multiValueHeaders: headers.multi ?? {},
    queryStringParameters: query.single,
    multiValueQueryStringParameters: query.multi,
    pathParameters,
    stageVariables: null,
    ...bodyOf(request, last('Content-Type'), input.binaryMediaTypes ?? []),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      // API Gateway adds the principal id and the authorizer's latency to the context it passes on.
      authorizer: authorizer && {
        ...authorizer.context,
        principalId: authorizer.principalId,
        integrationLatency: authorizer.integrationLatency,
      },
      domainName,
      domainPrefix: domainName.split('.')[0],
      extendedRequestId: requestId,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: identityOf(request.sourceIp, last('User-Agent') ?? null),
      // The local runtime serves the API at its root, as a custom domain mapped to the stage
      // does: the path carries no stage prefix (on an execute-api URL it would: /<stage>/...).
      path: request.rawPath,
      stage,
      requestId,
      requestTime: requestTime(now),
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: resource,
    },
  };
}

/** A Lambda context whose clock runs from the invocation, like the real one's. */
export function lambdaContext(input: {
  functionName: string;
  awsRequestId: string;
  timeoutMs: number;
  now?: () => number;
}): Context {
  const now = input.now ?? Date.now;
  const deadline = now() + input.timeoutMs;
  const unsupported = () => {
    throw new Error('The callback-style context methods are not supported; return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: input.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${input.functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: input.awsRequestId,
    logGroupName: `/aws/lambda/${input.functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
