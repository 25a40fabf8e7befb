import { getContact } from '../core/contacts';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.getContact, async ({ principal, path }) => ({
  statusCode: 200,
  body: { contact: await getContact(principal.tenant.id, path.id) },
}));
