import { ListContactsQuery } from '../../../contexts/contacts/requests/list-contacts';
import type { RouteSpec } from '../../http/route-spec';

export const listContactsRoute = {
  operationId: 'listContacts',
  method: 'GET',
  path: '/contacts',
  handler: 'lambdas/handlers/api/list-contacts.ts',
  auth: 'apiKey',
  scope: 'contacts.view',
  tag: 'Contacts',
  summary: "The organization's shared directory, newest first",
  query: ListContactsQuery,
  responses: { 200: 'ContactList' },
  errors: [],
  description:
    'The shared directory, newest first, in pages of `limit` (default 50) with `cursor`. `search` matches display ' +
    'name, company or number; `includeAutoCreated=false` leaves out the contacts the system created from call ' +
    'history.',
} satisfies RouteSpec;
