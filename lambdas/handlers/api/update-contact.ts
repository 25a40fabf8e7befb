import { updateContact } from '../../contexts/contacts/contacts';
import { apiHandler } from '../http/api-handler';
import { updateContactRoute } from './operations/update-contact';

export const handler = apiHandler(updateContactRoute, async ({ principal, path, body }) => ({
  statusCode: 200,
  body: { contact: await updateContact(principal.tenant.id, path.id, body) },
}));
