import { ListContactsQuery } from '../../core/requests/list-contacts';
import type { RouteSpec } from '../routes';

export const listContactsRoute = {
  operationId: 'listContacts',
  method: 'GET',
  path: '/contacts',
  handler: 'lambdas/api/list-contacts.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  summary: "The organization's shared directory, newest first",
  query: ListContactsQuery,
  responses: { 200: 'ContactList' },
  errors: [400],
} satisfies RouteSpec;
