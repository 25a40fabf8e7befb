import { CounterpartPath, ListMessagesQuery } from '../../../contexts/texting/requests/list-messages';
import type { RouteSpec } from '../../http/route-spec';

export const listMessagesRoute = {
  operationId: 'listMessages',
  method: 'GET',
  path: '/messages/{counterpart}',
  handler: 'lambdas/handlers/api/list-messages.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  tag: 'Messages',
  summary: 'The conversation with one external number, newest first; pages go back in time',
  path_params: CounterpartPath,
  invalidPathStatus: 400,
  query: ListMessagesQuery,
  responses: { 200: 'MessageList' },
  errors: [],
  description:
    'The messages exchanged with one external number (`counterpart`, E.164; a literal `+` is legal in the path, ' +
    '`%2B` works too), newest first; each next page (`cursor` = the previous `nextCursor`) goes further back in ' +
    'time. Reading through the API does not mark the thread read.',
} satisfies RouteSpec;
