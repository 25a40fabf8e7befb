import { GetConsentQuery } from '../../../contexts/consent/requests/get-consent';
import type { RouteSpec } from '../../http/route-spec';

export const getConsentRoute = {
  operationId: 'getConsent',
  method: 'GET',
  path: '/consent',
  handler: 'lambdas/handlers/api/get-consent.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  tag: 'Consent',
  summary: "One number's messaging consent: its status, source, evidence and latest changes",
  query: GetConsentQuery,
  responses: { 200: 'ConsentEnvelope' },
  errors: [],
  description:
    'Whoever recorded it: a STOP or START reply (`sms_keyword`), the carrier (`carrier_opt_out`) or `POST ' +
    '/consent`. `history` holds the latest changes, newest first (at most 20). A number never seen answers 200 ' +
    'with `status` `unknown` (texts to it are sent), `source`, `evidence` and `updatedAt` null and an empty ' +
    '`history`.',
} satisfies RouteSpec;
