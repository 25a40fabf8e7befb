import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const getContactRoute = {
  operationId: 'getContact',
  method: 'GET',
  path: '/contacts/{id}',
  handler: 'lambdas/handlers/api/get-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  tag: 'Contacts',
  summary: 'One contact',
  path_params: IdPath,
  responses: { 200: 'ContactEnvelope' },
  errors: [],
  description: "One contact of the organization's directory by id.",
} satisfies RouteSpec;
