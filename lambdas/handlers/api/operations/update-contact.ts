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
  tag: 'Contacts',
  summary: 'Change some fields of a contact',
  path_params: IdPath,
  body: UpdateContactBody,
  responses: { 200: 'ContactEnvelope' },
  errors: ['contact_conflict'],
  description:
    'Changes the fields the body names (at least one; an empty body is 400, so a misspelled field cannot look like ' +
    'success); `null` clears an optional field. A new `phoneNumber` that another contact holds is 409 ' +
    "`contact_conflict` with that contact's `contactId`. Changing the number never changes any number's consent.",
} satisfies RouteSpec;
