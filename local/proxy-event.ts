import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * The Lambda proxy integration's input, built the way API Gateway REST (payload v1) builds it,
 * so the handlers run locally on exactly what they receive in AWS.
 */
export type IncomingRequest = {
  method: string;
  /** The path as sent, still percent-encoded, without the query string. */
  rawPath: string;
  /** The query string as sent, without `?`. */
  rawQuery: string;
  /** Node's `rawHeaders`: name, value, name, value... with the case the client used. */
  rawHeaders: string[];
  /** null when the request had no body, as in API Gateway. */
  body: string | null;
  sourceIp: string;
};

export type EventInput = {
  request: IncomingRequest;
  /** The route's path template, e.g. `/api/v1/contacts/{id}`. */
  resource: string;
  pathParameters: Record<string, string> | null;
  /** The authorizer's context (null on routes without auth). */
  authorizer: Record<string, string> | null;
  requestId: string;
  stage: string;
  now: Date;
};

type MultiValue = Record<string, string[]>;

/** Single- and multi-value maps; the single map keeps the last value of a repeated name, as API Gateway does. */
function singleAndMulti(pairs: Iterable<[string, string]>): { single: Record<string, string> | null; multi: MultiValue | null } {
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

/**
 * Query values are decoded like a form (`+` is a space, `%2B` is a plus), which is what API
 * Gateway REST does: an ISO offset such as `+02:00` must be sent as `%2B02:00`.
 */
const queryPairs = (rawQuery: string): [string, string][] => [...new URLSearchParams(rawQuery)];

export function toProxyEvent({ request, resource, pathParameters, authorizer, requestId, stage, now }: EventInput): APIGatewayProxyEvent {
  const headers = singleAndMulti(headerPairs(request.rawHeaders));
  const query = singleAndMulti(queryPairs(request.rawQuery));
  const userAgent = headers.single?.['User-Agent'] ?? headers.single?.['user-agent'] ?? null;
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
    body: request.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      // API Gateway adds the principal id to the context it passes on; the handlers ignore it.
      authorizer: authorizer && { ...authorizer, principalId: authorizer.keyId ?? 'local' },
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: {
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
        sourceIp: request.sourceIp,
        user: null,
        userAgent,
        userArn: null,
      },
      path: request.rawPath,
      stage,
      requestId,
      requestTimeEpoch: now.getTime(),
      resourceId: 'local',
      resourcePath: resource,
    },
  };
}

/** A Lambda context whose clock runs from the invocation, like the real one's. */
export function lambdaContext(input: { functionName: string; awsRequestId: string; timeoutMs: number; now?: () => number }): Context {
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
