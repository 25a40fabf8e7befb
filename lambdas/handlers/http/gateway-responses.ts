import type { ErrorCode } from '../../shared/errors';

/**
 * Responses API Gateway writes itself, before any handler runs. The CDK API construct installs
 * them as gateway responses and the local runtime sends the same bodies and headers, so an
 * integrator sees one behaviour in both places.
 */
export type GatewayResponse = {
  statusCode: number;
  body: { error: string; code: ErrorCode };
  headers: Record<string, string>;
};

export const GATEWAY_RESPONSES = {
  /** Missing, malformed, unknown, revoked or expired key (the authorizer threw "Unauthorized"). */
  unauthorized: {
    statusCode: 401,
    body: { error: 'A valid API key is required: send "Authorization: Bearer <API_KEY>"', code: 'unauthorized' },
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  /**
   * The authorizer denied: the organization's plan has no API access. (ACCESS_DENIED's body is
   * `ACCESS_DENIED_TEMPLATE`, filled from the authorizer's context: this is what it says then.)
   */
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

/**
 * The authorizer's context entries that word an ACCESS_DENIED. API Gateway answers 403 by itself
 * both when the authorizer denies (a plan without API access) and when a cached allow does not
 * cover the route (a scope the key lacks), and its response template can only read
 * `$context.authorizer.<key>`: so every result of the authorizer, allow or deny, carries the
 * body that a refusal of that key would have. Values are plain text without `"` or `\`: the
 * template pastes them into a JSON string.
 */
export const DENIAL_CONTEXT_KEYS = { error: 'deniedError', code: 'deniedCode' } as const;

/** The ACCESS_DENIED gateway response template (a VTL template: `$context...` is evaluated). */
export const ACCESS_DENIED_TEMPLATE = `{"error":"$context.authorizer.${DENIAL_CONTEXT_KEYS.error}","code":"$context.authorizer.${DENIAL_CONTEXT_KEYS.code}","requestId":"$context.requestId"}`;

/** What API Gateway makes of ACCESS_DENIED_TEMPLATE for an authorizer context: the local runtime's 403. */
export function accessDeniedResponse(context: Record<string, unknown> | undefined): GatewayResponse {
  const text = (key: string) => (typeof context?.[key] === 'string' ? (context[key] as string) : '');
  return {
    statusCode: 403,
    // As API Gateway pastes it: whatever the authorizer put there (always one of the codes it words).
    body: { error: text(DENIAL_CONTEXT_KEYS.error), code: text(DENIAL_CONTEXT_KEYS.code) as ErrorCode },
    headers: {},
  };
}

/** The words of a refusal for a scope the key lacks: the route's scope is one of those it does not hold. */
export function insufficientScopeDenial(missingScopes: readonly string[]): {
  error: string;
  code: 'insufficient_scope';
} {
  const lacks = missingScopes.length > 0 ? `; it does not hold ${missingScopes.join(', ')}` : '';
  return {
    error: `This API key lacks the scope this operation requires${lacks} (GET /api/v1/me lists the scopes it holds)`,
    code: 'insufficient_scope',
  };
}
