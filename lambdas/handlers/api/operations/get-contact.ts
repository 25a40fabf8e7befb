import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const getContactRoute = {
  operationId: 'getContact',
  method: 'GET',
  path: '/contacts/{id}',
  handler: 'lambdas/handlers/api/get-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  summary: 'One contact',
  path_params: IdPath,
  responses: { 200: 'ContactEnvelope' },
  errors: [404],
} satisfies RouteSpec;
