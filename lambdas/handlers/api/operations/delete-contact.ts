import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const deleteContactRoute = {
  operationId: 'deleteContact',
  method: 'DELETE',
  path: '/contacts/{id}',
  handler: 'lambdas/handlers/api/delete-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  summary: 'Delete a contact',
  path_params: IdPath,
  responses: { 204: null },
  errors: [404],
} satisfies RouteSpec;
