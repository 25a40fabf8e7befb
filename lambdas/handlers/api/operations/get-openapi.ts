import type { RouteSpec } from '../../http/route-spec';

export const getOpenApiRoute = {
  operationId: 'getOpenApi',
  method: 'GET',
  path: '/openapi.json',
  handler: 'lambdas/handlers/api/get-openapi.ts',
  auth: null,
  scope: null,
  tag: 'Reference',
  summary: 'The OpenAPI 3.1 description of this service',
  responses: { 200: null },
  errors: [],
  description: 'This document, as JSON. Needs no API key. The same document, rendered for reading, is `GET /docs`.',
} satisfies RouteSpec;
