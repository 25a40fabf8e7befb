import { IdPath } from '../../../shared/schemas/id-path';
import type { RouteSpec } from '../../http/route-spec';

export const deleteContactRoute = {
  operationId: 'deleteContact',
  method: 'DELETE',
  path: '/contacts/{id}',
  handler: 'lambdas/handlers/api/delete-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  tag: 'Contacts',
  summary: 'Delete a contact',
  path_params: IdPath,
  responses: { 204: null },
  errors: [],
  description:
    "Removes the contact and frees its number for another contact. The number's consent (an opt-out) is kept: it " +
    'belongs to the number, not to the contact. 204 with no body.',
} satisfies RouteSpec;
