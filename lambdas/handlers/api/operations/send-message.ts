import { SendMessageBody } from '../../../contexts/texting/requests/send-message';
import type { RouteSpec } from '../../http/route-spec';

export const sendMessageRoute = {
  operationId: 'sendMessage',
  method: 'POST',
  path: '/messages',
  handler: 'lambdas/handlers/api/send-message.ts',
  auth: 'apiKey',
  scope: 'sms.send',
  summary: "Send a text as the organization from its SMS number (billed at the organization's rate)",
  body: SendMessageBody,
  responses: { 201: 'MessageEnvelope' },
  errors: [400, 402, 409, 413, 415, 502],
  idempotent: true,
} satisfies RouteSpec;
