import { CounterpartPath, ListMessagesQuery } from '../../../contexts/texting/requests/list-messages';
import type { RouteSpec } from '../../http/route-spec';

export const listMessagesRoute = {
  operationId: 'listMessages',
  method: 'GET',
  path: '/messages/{counterpart}',
  handler: 'lambdas/handlers/api/list-messages.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  summary: 'The conversation with one external number, newest first; pages go back in time',
  path_params: CounterpartPath,
  invalidPathStatus: 400,
  query: ListMessagesQuery,
  responses: { 200: 'MessageList' },
  errors: [400],
} satisfies RouteSpec;
