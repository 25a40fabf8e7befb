import { MessageIdPath } from '../../../contexts/texting/requests/change-message';
import type { RouteSpec } from '../../http/route-spec';

export const cancelMessageRoute = {
  operationId: 'cancelMessage',
  method: 'POST',
  path: '/messages/{counterpart}/cancel',
  handler: 'lambdas/handlers/api/cancel-message.ts',
  auth: 'apiKey',
  scope: 'sms.send',
  tag: 'Messages',
  summary: 'Cancel a scheduled text (its cost is given back)',
  path_params: MessageIdPath,
  responses: { 200: 'MessageEnvelope' },
  errors: ['not_scheduled'],
  description:
    'The path segment holds the message `id` (it is named `counterpart` because `GET /messages/{counterpart}` ' +
    'shares it). A `scheduled` text becomes `canceled` (`cancelReason` `api`), its reserved cost is refunded in ' +
    'the same write and it is never sent; the `message.canceled` event follows. Once it is sent (or being sent), ' +
    'failed or already canceled: 409 `not_scheduled` with its `status`. An unknown id: 404.',
} satisfies RouteSpec;
