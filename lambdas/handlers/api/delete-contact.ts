import { deleteContact } from '../../contexts/contacts/contacts';
import { apiHandler } from '../http/api-handler';
import { deleteContactRoute } from './operations/delete-contact';

export const handler = apiHandler(deleteContactRoute, async ({ principal, path }) => {
  await deleteContact(principal.tenant.id, path.id);
  return { statusCode: 204 };
});
