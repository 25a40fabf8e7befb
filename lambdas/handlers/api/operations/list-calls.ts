import { ListCallsQuery } from '../../../contexts/calls/requests/list-calls';
import type { RouteSpec } from '../../http/route-spec';

export const listCallsRoute = {
  operationId: 'listCalls',
  method: 'GET',
  path: '/calls',
  handler: 'lambdas/handlers/api/list-calls.ts',
  auth: 'apiKey',
  scope: 'calls.view.team',
  summary: 'Call history, newest first',
  query: ListCallsQuery,
  responses: { 200: 'CallList' },
  errors: [400],
} satisfies RouteSpec;
