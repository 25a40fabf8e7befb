import type { RouteSpec } from '../../http/route-spec';

export const listThreadsRoute = {
  operationId: 'listThreads',
  method: 'GET',
  path: '/messages',
  handler: 'lambdas/handlers/api/list-threads.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  summary: 'Every text conversation of the organization, one per external number, newest activity first',
  responses: { 200: 'ThreadList' },
  errors: [],
} satisfies RouteSpec;
