import { createContact } from '../../contexts/contacts/contacts';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { withIdempotency } from '../http/idempotency';
import { createContactRoute } from './operations/create-contact';

/** 201 for a new contact, 200 when the auto-created contact of the number was adopted. */
export const handler = apiHandler(createContactRoute, async ({ principal, body, headers, requestId }) =>
  withIdempotency(
    { tenantId: principal.tenant.id, operation: createContactRoute.operationId, headers, request: body },
    async () => {
      const { contact, adopted } = await createContact(
        principal.tenant.id,
        body,
        undefined,
        requestOriginOf({ requestId, headers }),
      );
      return { statusCode: adopted ? 200 : 201, body: { contact, adopted } };
    },
  ),
);
