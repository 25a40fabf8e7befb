import { updateContact } from '../../contexts/contacts/contacts';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { updateContactRoute } from './operations/update-contact';

export const handler = apiHandler(updateContactRoute, async (request) => ({
  statusCode: 200,
  body: {
    contact: await updateContact(
      request.principal.tenant.id,
      request.path.id,
      request.body,
      undefined,
      requestOriginOf(request),
    ),
  },
}));
