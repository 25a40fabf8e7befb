import type { RouteSpec } from '../../http/route-spec';

export const getMeRoute = {
  operationId: 'getMe',
  method: 'GET',
  path: '/me',
  handler: 'lambdas/handlers/api/get-me.ts',
  auth: 'apiKey',
  scope: null,
  summary: "The key's organization, identity, scopes and rate limit",
  responses: { 200: 'Me' },
  errors: [],
} satisfies RouteSpec;
