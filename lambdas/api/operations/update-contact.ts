import { IdPath } from '../../core/requests/id-path';
import { UpdateContactBody } from '../../core/requests/update-contact';
import type { RouteSpec } from '../routes';

export const updateContactRoute = {
  operationId: 'updateContact',
  method: 'PATCH',
  path: '/contacts/{id}',
  handler: 'lambdas/api/update-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  summary: 'Change some fields of a contact',
  path_params: IdPath,
  body: UpdateContactBody,
  responses: { 200: 'ContactEnvelope' },
  errors: [400, 404, 409, 413, 415],
} satisfies RouteSpec;
