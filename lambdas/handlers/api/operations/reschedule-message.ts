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
  errors: ['not_scheduled', 'quiet_hours'],
  description:
    'The path segment holds the message `id` (it is named `counterpart` because `GET /messages/{counterpart}` ' +
    'shares it). A `scheduled` text gets the new `sendAt` (same bounds as `POST /messages`: 400 naming `sendAt` ' +
    "otherwise) and is sent within a minute after it. Quiet hours hold the new time as they hold a send's: " +
    "outside the recipient's window, 422 `quiet_hours` with `allowedAt` (policy `refuse`: the text keeps its " +
    'time) or the text moved to `allowedAt` (policy `defer`: 200 with that `sendAt`). Once it is sent (or being ' +
    'sent), failed or canceled: 409 ' +
    '`not_scheduled`. An unknown id: 404.',
} satisfies RouteSpec;
