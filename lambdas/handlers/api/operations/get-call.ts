import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const getCallRoute = {
  operationId: 'getCall',
  method: 'GET',
  path: '/calls/{id}',
  handler: 'lambdas/handlers/api/get-call.ts',
  auth: 'apiKey',
  scope: 'calls.view.team',
  tag: 'Calls',
  summary: 'One call',
  path_params: IdPath,
  responses: { 200: 'CallEnvelope' },
  errors: [],
  description: "One call by the service's own id, as the list returns it (never the telephony provider's call id).",
} satisfies RouteSpec;
