/**
 * The authorizer's IAM policy. API Gateway caches one result per token for the TTL and checks
 * every later request of that token against the cached policy, so the policy must name every
 * route the key may call, not only the one that asked: exactly the keyed routes whose scope the
 * key holds (or that need none), and no others. A route outside it is refused by API Gateway
 * itself (403 ACCESS_DENIED) before any function runs.
 *
 * The routes and their scopes come from the route manifest, handed to the function in its
 * environment (`API_ROUTE_SCOPES`, written by the CDK and the local runtime with
 * `encodeRoutePermissions`): the authorizer bundle never loads a route's request schemas.
 * No imports, so the CDK app can use it.
 */
export type RoutePermission = { method: string; path: string; scope: string | null };

export const ROUTE_SCOPES_ENV = 'API_ROUTE_SCOPES';

const NO_SCOPE = '-';

/** `GET /api/v1/calls calls.view.team;GET /api/v1/me -;...`: keyed routes only, paths with the API prefix. */
export function encodeRoutePermissions(
  routes: readonly { method: string; path: string; scope: string | null; auth: string | null }[],
  prefix: string,
): string {
  return routes
    .filter((route) => route.auth !== null)
    .map((route) => `${route.method} ${prefix}${route.path} ${route.scope ?? NO_SCOPE}`)
    .join(';');
}

export function decodeRoutePermissions(encoded: string | undefined): RoutePermission[] {
  if (!encoded)
    throw new Error(`${ROUTE_SCOPES_ENV} is not set: the authorizer cannot tell which routes a key may call`);
  return encoded.split(';').map((entry) => {
    const [method, path, scope] = entry.split(' ');
    if (!method || !path?.startsWith('/') || !scope)
      throw new Error(`${ROUTE_SCOPES_ENV} has a malformed entry: ${entry}`);
    return { method, path, scope: scope === NO_SCOPE ? null : scope };
  });
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path -> arn:aws:execute-api:region:account:apiId/stage */
export function stageArn(methodArn: string): string {
  const [arnWithApiId, stage] = methodArn.split('/');
  return `${arnWithApiId}/${stage}`;
}

/** The method ARN of a route: each `{parameter}` becomes `*`, the wildcard of one path segment's value. */
export const routeArn = (stage: string, route: RoutePermission): string =>
  `${stage}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`;

/** The resources a key holding `scopes` may invoke, on the stage of the request that asked. */
export function allowedResources(
  methodArn: string,
  routes: readonly RoutePermission[],
  scopes: readonly string[],
): string[] {
  const stage = stageArn(methodArn);
  return routes
    .filter((route) => route.scope === null || scopes.includes(route.scope))
    .map((route) => routeArn(stage, route));
}

export type PolicyDocument = {
  Version: '2012-10-17';
  Statement: { Action: 'execute-api:Invoke'; Effect: 'Allow' | 'Deny'; Resource: string | string[] }[];
};

export const policy = (effect: 'Allow' | 'Deny', resource: string | string[]): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
});
