import { listContacts } from '../../contexts/contacts/contacts';
import { apiHandler } from '../http/api-handler';
import { listContactsRoute } from './operations/list-contacts';

export const handler = apiHandler(listContactsRoute, async ({ principal, query }) => {
  const page = await listContacts(principal.tenant.id, query);
  return {
    statusCode: 200,
    body: {
      contacts: page.items,
      nextCursor: page.nextCursor,
      ...(page.nextUpdatedSince !== undefined && { nextUpdatedSince: page.nextUpdatedSince }),
      ...(page.deletedContacts && { deletedContacts: page.deletedContacts }),
    },
  };
});
