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
  errors: ['resync_required'],
  description:
    'The shared directory, newest first, in pages of `limit` (default 50) with `cursor`. `search` matches display ' +
    'name, company or number; `includeAutoCreated=false` leaves out the contacts the system created from call ' +
    'history. `externalId` finds the contact holding your id. `updatedSince` turns the list into the feed of changes ' +
    'since a time, oldest change first, for keeping a copy of the directory in step (with `includeDeleted=true`, ' +
    'deletions too): start the next walk at the `nextUpdatedSince` the pages of the previous one carry. With ' +
    '`includeDeleted=true`, a walk from before the 30 days deletions are kept is 410 `resync_required`. Every page ' +
    'is one read of an index, whatever the size of the directory.',
} satisfies RouteSpec;
