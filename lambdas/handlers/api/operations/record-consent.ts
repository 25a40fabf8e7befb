import { RecordConsentBody } from '../../../contexts/consent/requests/record-consent';
import type { RouteSpec } from '../../http/route-spec';

export const recordConsentRoute = {
  operationId: 'recordConsent',
  method: 'POST',
  path: '/consent',
  handler: 'lambdas/handlers/api/record-consent.ts',
  auth: 'apiKey',
  // Consent decides whether the organization may text a number: recording it is as much a power as sending.
  scope: 'sms.send',
  tag: 'Consent',
  summary: 'Record an opt-out or an opt-in the person gave you by email, a web form, a call or in person',
  body: RecordConsentBody,
  responses: { 200: 'ConsentEnvelope' },
  errors: ['consent_superseded'],
  idempotent: true,
  // A whole evidence is under 2 KiB: anything near the default 64 KiB is not a consent.
  maxBodyBytes: 16 * 1024,
  description:
    'The change binds from the next send: after an opt-out, `POST /messages` to the number answers 409 ' +
    '`recipient_opted_out` (as after a STOP) and every text scheduled to it is canceled at once (`cancelReason` ' +
    '`opted_out`, refunded, `message.canceled`). An opt-in needs `evidence` (400 naming it otherwise) and reopens ' +
    "sending. Each change raises `consent.changed` with its `source` and joins the number's history. The change " +
    "takes the evidence's `collectedAt` as its time (the request's when there is none): the latest decision wins, " +
    'so a change older than the one on record is refused 409 `consent_superseded` and nothing is written. The ' +
    "same change sent again (same time, status and source) is harmless. The answer is the number's consent as " +
    'it now stands, as `GET /consent` shows it. Evidence is stored as given and never logged.',
} satisfies RouteSpec;
