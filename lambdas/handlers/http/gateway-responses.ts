import type { ErrorCode } from '../../shared/errors';

/**
 * Responses API Gateway writes itself, before any handler runs. The CDK API construct installs
 * them as gateway responses and the local runtime sends the same bodies and headers, so an
 * integrator sees one behaviour in both places.
 */
export type GatewayResponse = { statusCode: number; body: { error: string; code: ErrorCode }; headers: Record<string, string> };

export const GATEWAY_RESPONSES = {
  /** Missing, malformed, unknown, revoked or expired key (the authorizer threw "Unauthorized"). */
  unauthorized: {
    statusCode: 401,
    body: { error: 'A valid API key is required: send "Authorization: Bearer <API_KEY>"', code: 'unauthorized' },
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  /** The authorizer denied: the organization's plan has no API access. */
  accessDenied: {
    statusCode: 403,
    body: { error: "This organization's plan does not include API access", code: 'api_access_disabled' },
    headers: {},
  },
  /** No route matches the method and path. */
  notFound: {
    statusCode: 404,
    body: { error: 'No such endpoint; see GET /api/v1/openapi.json', code: 'not_found' },
    headers: {},
  },
  /** A path exists but not with this method. */
  methodNotAllowed: {
    statusCode: 405,
    body: { error: 'This method is not allowed on this path', code: 'method_not_allowed' },
    headers: {},
  },
  /** Throttled at the edge (usage plan or stage throttle); `Retry-After` is a conservative minute window. */
  throttled: {
    statusCode: 429,
    body: { error: 'Rate limit exceeded; retry after the number of seconds in Retry-After', code: 'rate_limited' },
    headers: { 'Retry-After': '60' },
  },
  /** A body over API Gateway's 10 MB payload limit (REQUEST_TOO_LARGE); handlers refuse over 64 KiB themselves. */
  requestTooLarge: {
    statusCode: 413,
    body: { error: 'Request body larger than 10 MB', code: 'payload_too_large' },
    headers: {},
  },
  internal: {
    statusCode: 500,
    body: { error: 'Internal error', code: 'internal' },
    headers: {},
  },
} satisfies Record<string, GatewayResponse>;
