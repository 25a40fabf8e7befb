import type { RouteSpec } from '../../http/route-spec';

export const getApiReferenceRoute = {
  operationId: 'getApiReference',
  method: 'GET',
  path: '/docs',
  handler: 'lambdas/handlers/api/get-api-reference.ts',
  auth: null,
  scope: null,
  tag: 'Reference',
  summary: 'This reference, as a web page',
  responses: { 200: null },
  produces: 'text/html',
  errors: [],
  description:
    'Every operation, webhook, schema and example of this document, rendered as one self-contained HTML page: open ' +
    'it in a ' +
    'browser. Needs no API key. The page loads nothing from any other host.',
} satisfies RouteSpec;
