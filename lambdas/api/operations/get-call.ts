import { IdPath } from '../../core/requests/id-path';
import type { RouteSpec } from '../routes';

export const getCallRoute = {
  operationId: 'getCall',
  method: 'GET',
  path: '/calls/{id}',
  handler: 'lambdas/api/get-call.ts',
  auth: 'apiKey',
  scope: 'calls.view.team',
  summary: 'One call',
  path_params: IdPath,
  responses: { 200: 'CallEnvelope' },
  errors: [404],
} satisfies RouteSpec;
