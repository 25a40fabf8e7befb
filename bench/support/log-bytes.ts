import { ACCESS_LOG_FIELDS } from '../../lib/constructs/public-api';

/**
 * The CloudWatch Logs bytes one request ingests in AWS: API Gateway's access-log line, the lines
 * each function invoked writes itself (measured from the runtime), and Lambda's own lines for each
 * invocation. CloudWatch Logs meters a log event as its UTF-8 message plus 26 bytes (the figure its
 * PutLogEvents quota counts an event by; taken as the ingested size, the higher reading).
 */
export const LOG_EVENT_OVERHEAD_BYTES = 26;

/** An event's metered bytes. */
export const logEventBytes = (message: string): number => Buffer.byteLength(message, 'utf8') + LOG_EVENT_OVERHEAD_BYTES;

/** What one request puts in the access log, as API Gateway fills the stack's format. */
export type AccessLogValues = {
  requestId: string;
  httpMethod: string;
  /** The route's path, with its `{parameters}`, under /api/v1. */
  resourcePath: string;
  path: string;
  status: number;
  responseLength: number;
  latencyMs: number;
  /** Whether the authorizer ran (a cache miss): its status and latency are then filled. */
  authorizerRan: boolean;
  /** The authorizer context's ids; absent for a route without a key. */
  tenantId?: string;
  keyId?: string;
};

/**
 * The values API Gateway makes up itself, in their documented shapes and lengths: an extended
 * request id, an X-Ray trace id, the request time in CLF, an IPv4 address, and the user agent of
 * Node's fetch (the typed client's; a longer one adds its length).
 */
const GATEWAY_MADE = {
  extendedRequestId: 'Yx3kLHbToAMEbZw=',
  xrayTraceId: '1-6746f0a1-4c7d1e2b9a8f3c5d6e7f8091',
  requestTime: '27/Nov/2026:12:52:01 +0000',
  sourceIp: '203.0.113.195',
  userAgent: 'node',
};

/**
 * The access-log line of one request, rendered from `ACCESS_LOG_FIELDS` with a `-` for every value API Gateway leaves
 * empty.
 */
export function accessLogLine(values: AccessLogValues): string {
  const latency = String(Math.max(1, Math.round(values.latencyMs)));
  const filled: Record<keyof typeof ACCESS_LOG_FIELDS, string> = {
    requestId: values.requestId,
    ...GATEWAY_MADE,
    httpMethod: values.httpMethod,
    resourcePath: values.resourcePath,
    path: values.path,
    status: String(values.status),
    responseLength: String(values.responseLength),
    responseLatency: latency,
    integrationLatency: latency,
    integrationStatus: String(values.status),
    errorResponseType: '-',
    errorMessage: '-',
    authorizerStatus: values.authorizerRan ? '200' : '-',
    authorizerLatency: values.authorizerRan ? latency : '-',
    authorizerError: '-',
    tenantId: values.tenantId ?? '-',
    keyId: values.keyId ?? '-',
  };
  return JSON.stringify(filled);
}

/**
 * Lambda's own lines for one invocation in the text log format (the stack's): START, END and
 * REPORT, three events. A traced invocation's REPORT also names its trace (about 90 bytes more), a
 * cold one its init duration: both are left out, at 1 % of requests and a few per hour.
 */
export function platformLogBytes(requestId: string, billedMs: number, memoryMb = 256, maxMemoryMb = 90): number {
  const duration = `${(billedMs - 0.4).toFixed(2)} ms`;
  return (
    logEventBytes(`START RequestId: ${requestId} Version: $LATEST\n`) +
    logEventBytes(`END RequestId: ${requestId}\n`) +
    logEventBytes(
      `REPORT RequestId: ${requestId}\tDuration: ${duration}\tBilled Duration: ${billedMs} ms\tMemory Size: ` +
        `${memoryMb} MB\tMax Memory Used: ${maxMemoryMb} MB\t\n`,
    )
  );
}
