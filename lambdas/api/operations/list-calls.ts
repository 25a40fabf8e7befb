import { ListCallsQuery } from '../../core/requests/list-calls';
import type { RouteSpec } from '../routes';

export const listCallsRoute = {
  operationId: 'listCalls',
  method: 'GET',
  path: '/calls',
  handler: 'lambdas/api/list-calls.ts',
  auth: 'apiKey',
  scope: 'calls.view.team',
  summary: 'Call history, newest first',
  query: ListCallsQuery,
  responses: { 200: 'CallList' },
  errors: [400],
} satisfies RouteSpec;
