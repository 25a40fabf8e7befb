import { updateContact } from '../core/contacts';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.updateContact, async ({ principal, path, body }) => ({
  statusCode: 200,
  body: { contact: await updateContact(principal.tenant.id, path.id, body) },
}));
