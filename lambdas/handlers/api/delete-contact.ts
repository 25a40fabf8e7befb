import { deleteContact } from '../../contexts/contacts/contacts';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { deleteContactRoute } from './operations/delete-contact';

export const handler = apiHandler(deleteContactRoute, async (request) => {
  await deleteContact(request.principal.tenant.id, request.path.id, requestOriginOf(request));
  return { statusCode: 204 };
});
