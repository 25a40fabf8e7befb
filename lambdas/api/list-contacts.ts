import { listContacts } from '../core/contacts';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.listContacts, async ({ principal, query }) => {
  const page = await listContacts(principal.tenant.id, query);
  return { statusCode: 200, body: { contacts: page.items, nextCursor: page.nextCursor } };
});
