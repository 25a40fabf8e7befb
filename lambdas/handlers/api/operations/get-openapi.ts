import type { RouteSpec } from '../../http/route-spec';

export const getOpenApiRoute = {
  operationId: 'getOpenApi',
  method: 'GET',
  path: '/openapi.json',
  handler: 'lambdas/handlers/api/get-openapi.ts',
  auth: null,
  scope: null,
  summary: 'The OpenAPI 3.1 description of this service',
  responses: { 200: null },
  errors: [],
} satisfies RouteSpec;
