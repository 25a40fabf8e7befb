import type { RouteSpec } from '../routes';

export const getMeRoute = {
  operationId: 'getMe',
  method: 'GET',
  path: '/me',
  handler: 'lambdas/api/get-me.ts',
  auth: 'apiKey',
  scope: null,
  summary: "The key's organization, identity, scopes and rate limit",
  responses: { 200: 'Me' },
  errors: [],
} satisfies RouteSpec;
