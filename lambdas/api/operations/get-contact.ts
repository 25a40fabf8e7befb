import { IdPath } from '../../core/requests/id-path';
import type { RouteSpec } from '../routes';

export const getContactRoute = {
  operationId: 'getContact',
  method: 'GET',
  path: '/contacts/{id}',
  handler: 'lambdas/api/get-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  summary: 'One contact',
  path_params: IdPath,
  responses: { 200: 'ContactEnvelope' },
  errors: [404],
} satisfies RouteSpec;
