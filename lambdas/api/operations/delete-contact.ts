import { IdPath } from '../../core/requests/id-path';
import type { RouteSpec } from '../routes';

export const deleteContactRoute = {
  operationId: 'deleteContact',
  method: 'DELETE',
  path: '/contacts/{id}',
  handler: 'lambdas/api/delete-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  summary: 'Delete a contact',
  path_params: IdPath,
  responses: { 204: null },
  errors: [404],
} satisfies RouteSpec;
