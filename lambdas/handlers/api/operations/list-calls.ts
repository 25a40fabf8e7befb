import { ListCallsQuery } from '../../../contexts/calls/requests/list-calls';
import type { RouteSpec } from '../../http/route-spec';

export const listCallsRoute = {
  operationId: 'listCalls',
  method: 'GET',
  path: '/calls',
  handler: 'lambdas/handlers/api/list-calls.ts',
  auth: 'apiKey',
  scope: 'calls.view.team',
  tag: 'Calls',
  summary: 'Call history, newest first',
  query: ListCallsQuery,
  responses: { 200: 'CallList' },
  errors: [],
  description:
    "The organization's calls, newest first, in pages of `limit` (default 50). Filter by `direction` and by " +
    "`since` (calls that started at or after that instant). Pass the previous page's `nextCursor` as `cursor` for " +
    'the next page; `nextCursor` is null on the last page. `status` is an open set: tolerate values you do not ' +
    'know.',
} satisfies RouteSpec;
