import { ListContactsQuery } from '../../../contexts/contacts/requests/list-contacts';
import type { RouteSpec } from '../../http/route-spec';

export const listContactsRoute = {
  operationId: 'listContacts',
  method: 'GET',
  path: '/contacts',
  handler: 'lambdas/handlers/api/list-contacts.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  summary: "The organization's shared directory, newest first",
  query: ListContactsQuery,
  responses: { 200: 'ContactList' },
  errors: [400],
} satisfies RouteSpec;
