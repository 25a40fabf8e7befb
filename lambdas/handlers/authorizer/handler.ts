import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authorizeAuthorizationHeader, principalToContext } from '../../contexts/tenants/auth';
import { SCOPES } from '../../contexts/tenants/scopes';
import { logger } from '../../shared/aws';
import { intEnv, requireEnv } from '../../shared/config';
import { DENIAL_CONTEXT_KEYS, GATEWAY_RESPONSES, insufficientScopeDenial } from '../http/gateway-responses';
import {
  allowedResources,
  decodeRoutePermissions,
  policy,
  ROUTE_SCOPES_ENV,
  stageArn,
  type RoutePermission,
} from './policy';
import {
  usagePlanKeyFor,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
  type UsagePlanBuckets,
} from './usage-plan-keys';

/** Read once: a function without it fails every request (AUTHORIZER_FAILURE, 500) rather than guess. */
let routes: RoutePermission[] | undefined;
const routesOf = (): RoutePermission[] => (routes ??= decodeRoutePermissions(process.env[ROUTE_SCOPES_ENV]));

/** The stage's usage-plan keys, read once; without them every request fails (500) rather than go unmetered. */
let buckets: UsagePlanBuckets | undefined;
function bucketsOf(): UsagePlanBuckets {
  if (buckets) return buckets;
  const count = intEnv(USAGE_PLAN_BUCKETS_ENV, 0);
  if (count < 1) throw new Error(`${USAGE_PLAN_BUCKETS_ENV} must be a whole number of at least 1`);
  return (buckets = { prefix: requireEnv(USAGE_PLAN_KEY_PREFIX_ENV), count });
}

const denial = (words: { error: string; code: string }) => ({
  [DENIAL_CONTEXT_KEYS.error]: words.error,
  [DENIAL_CONTEXT_KEYS.code]: words.code,
});

/**
 * TOKEN authorizer. API Gateway caches the result per token for the configured TTL and checks
 * every request of that token against the cached policy (./policy.ts):
 * - unknown, malformed, revoked, expired key: throw "Unauthorized" -> API Gateway answers 401
 *   (its gateway response adds `WWW-Authenticate: Bearer`);
 * - plan without API access: Deny everything -> 403 (ACCESS_DENIED, code api_access_disabled);
 * - a valid key: Allow exactly the routes its scopes permit; any other route is 403 ACCESS_DENIED,
 *   code insufficient_scope, worded from the context (`DENIAL_CONTEXT_KEYS`).
 * An allowed key also names the usage-plan key of its bucket (`usageIdentifierKey`: one of the
 * few API Gateway keys the stack creates, chosen by a hash of the key's id; ./usage-plan-keys.ts),
 * which the stack's usage plan meters (API key source AUTHORIZER).
 */
export async function handler(event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const routeScopes = routesOf();
  const usagePlanKeys = bucketsOf();
  const decision = await authorizeAuthorizationHeader(event.authorizationToken);
  if (decision.effect === 'allow') {
    const { principal } = decision;
    const missing = SCOPES.filter((scope) => !principal.scopes.includes(scope));
    return {
      principalId: principal.apiKey.id,
      policyDocument: policy('Allow', allowedResources(event.methodArn, routeScopes, principal.scopes)),
      context: { ...principalToContext(principal), ...denial(insufficientScopeDenial(missing)) },
      usageIdentifierKey: usagePlanKeyFor(principal.apiKey.id, usagePlanKeys),
    };
  }
  if (decision.reason === 'api_access_disabled') {
    return {
      principalId: 'plan-without-api-access',
      policyDocument: policy('Deny', `${stageArn(event.methodArn)}/*`),
      context: denial(GATEWAY_RESPONSES.accessDenied.body),
    };
  }
  logger.info('API key refused');
  throw new Error('Unauthorized');
}
