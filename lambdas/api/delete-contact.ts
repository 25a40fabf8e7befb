import { deleteContact } from '../core/contacts';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.deleteContact, async ({ principal, path }) => {
  await deleteContact(principal.tenant.id, path.id);
  return { statusCode: 204 };
});
