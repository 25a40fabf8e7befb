import { UpdateContactBody } from '../../../contexts/contacts/requests/update-contact';
import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const updateContactRoute = {
  operationId: 'updateContact',
  method: 'PATCH',
  path: '/contacts/{id}',
  handler: 'lambdas/handlers/api/update-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  summary: 'Change some fields of a contact',
  path_params: IdPath,
  body: UpdateContactBody,
  responses: { 200: 'ContactEnvelope' },
  errors: [400, 404, 409, 413, 415],
} satisfies RouteSpec;
