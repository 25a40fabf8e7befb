import { ListThreadsQuery } from '../../../contexts/texting/requests/list-threads';
import type { RouteSpec } from '../../http/route-spec';

export const listThreadsRoute = {
  operationId: 'listThreads',
  method: 'GET',
  path: '/messages',
  handler: 'lambdas/handlers/api/list-threads.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  tag: 'Messages',
  summary:
    'The text conversations of the organization, one per external number, newest activity first, a page at a time',
  description:
    'Pages like every list: `limit` (default 50, 1 to 100, larger values are clamped to 100) and `cursor` (the ' +
    'previous ' +
    "page's `nextCursor`, null on the last page). Both are optional and were added to v1 without breaking it: a " +
    'request ' +
    'without them gets the first 50 threads and a `nextCursor`. A thread that gets a new message moves to the top, ' +
    'ahead ' +
    'of any cursor: to see it, start again from the first page. A page may hold fewer than `limit` threads with a ' +
    'non-null `nextCursor` when its size would pass the response limit; keep following `nextCursor`.',
  query: ListThreadsQuery,
  responses: { 200: 'ThreadList' },
  errors: [],
} satisfies RouteSpec;
