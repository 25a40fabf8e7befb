import { SendMessageBody } from '../../../contexts/texting/requests/send-message';
import type { RouteSpec } from '../../http/route-spec';

export const sendMessageRoute = {
  operationId: 'sendMessage',
  method: 'POST',
  path: '/messages',
  handler: 'lambdas/handlers/api/send-message.ts',
  auth: 'apiKey',
  scope: 'sms.send',
  tag: 'Messages',
  summary: "Send a text as the organization from its SMS number (billed at the organization's rate)",
  body: SendMessageBody,
  responses: { 201: 'MessageEnvelope' },
  errors: [
    'billing_blocked',
    'spending_limit_reached',
    'no_sms_number',
    'recipient_opted_out',
    'carrier_rejected',
    'carrier_unavailable',
    'quiet_hours',
  ],
  idempotent: true,
  description:
    'The consent check, the charge and the stored `queued` message are one transaction, so a number that replied ' +
    'STOP is never ' +
    'texted and nothing is charged twice. The answer then depends on the carrier: accepted, 201 with its ' +
    '`messageSid`; ' +
    'no definite answer in time (a timeout, a reset, a carrier 5xx), 201 with the message still `queued` and ' +
    'charged: the text ' +
    "may be on its way, and the carrier's status callback settles it (a text still unsettled one hour later is " +
    'marked `failed` ' +
    'and refunded). Never retry a 201 `queued` with a new Idempotency-Key: follow the message (GET ' +
    '/messages/{counterpart}, or ' +
    'the webhooks). A definite refusal is 422 `carrier_rejected` (failed, not billed); a carrier that certainly ' +
    'never got the ' +
    'text is 502 `carrier_unavailable` (failed, not billed). A text that fails later is refunded too: you pay for ' +
    "texts that did not fail. Quiet hours (the organization's policy, `quietHours` of `GET /me`, off by default): " +
    "a text that would land outside its recipient's local window, now or at its `sendAt`, is refused with 422 " +
    '`quiet_hours` and `allowedAt` (policy `refuse`: nothing charged or stored, and the Idempotency-Key is not ' +
    'kept, so a retry is judged again) or scheduled for `allowedAt` (policy `defer`: 201 `scheduled` with that ' +
    '`sendAt`, which may be under a minute away).',
  idempotencyRules:
    'A unique key per intended text (e.g. a UUID), strongly recommended. The key is claimed in the same transaction ' +
    'that charges ' +
    'the text, so one key is at most one text and one carrier request. A retry with the same key and body, while the ' +
    'first is ' +
    'still running or after any outcome, returns that message as it now stands (header `Idempotent-Replayed: true`), ' +
    'or the same ' +
    '409/422/502 the first send ended with; it never reaches the carrier again. The same key with another body is ' +
    '422 ' +
    '`idempotency_mismatch`. Keys are kept 24 hours per organization.',
} satisfies RouteSpec;
