import { MessageIdPath, RescheduleMessageBody } from '../../../contexts/texting/requests/change-message';
import type { RouteSpec } from '../../http/route-spec';

export const rescheduleMessageRoute = {
  operationId: 'rescheduleMessage',
  method: 'PATCH',
  path: '/messages/{counterpart}',
  handler: 'lambdas/handlers/api/reschedule-message.ts',
  auth: 'apiKey',
  scope: 'sms.send',
  tag: 'Messages',
  summary: 'Move a scheduled text to another time',
  path_params: MessageIdPath,
  body: RescheduleMessageBody,
  responses: { 200: 'MessageEnvelope' },
  errors: ['not_scheduled'],
  description:
    'The path segment holds the message `id` (it is named `counterpart` because `GET /messages/{counterpart}` ' +
    'shares it). A `scheduled` text gets the new `sendAt` (same bounds as `POST /messages`: 400 naming `sendAt` ' +
    'otherwise) and is sent within a minute after it. Once it is sent (or being sent), failed or canceled: 409 ' +
    '`not_scheduled`. An unknown id: 404.',
} satisfies RouteSpec;
