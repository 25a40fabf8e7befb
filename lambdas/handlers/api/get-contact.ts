import { getContact } from '../../contexts/contacts/contacts';
import { apiHandler } from '../http/api-handler';
import { getContactRoute } from './operations/get-contact';

export const handler = apiHandler(getContactRoute, async ({ principal, path }) => ({
  statusCode: 200,
  body: { contact: await getContact(principal.tenant.id, path.id) },
}));
