import { deleteContacts, type DeleteEntry } from '../../contexts/contacts/contact-batch-delete';
import { ContactDeleteItem } from '../../contexts/contacts/requests/delete-contacts';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { withIdempotency } from '../http/idempotency';
import { validationMessageAt } from '../http/validation';
import { deleteContactsRoute } from './operations/delete-contacts';

/** Each item validated on its own: a bad one is answered `invalid` at its index, never a 400 for the batch. */
const entryOf = (raw: unknown, index: number): DeleteEntry => {
  const parsed = ContactDeleteItem.safeParse(raw);
  return parsed.success
    ? { index, item: parsed.data }
    : { index, invalid: validationMessageAt(parsed.error, `contacts[${index}]`) };
};

/** Time kept after the last item for recording the answer under its Idempotency-Key and sending it. */
const ANSWER_MARGIN_MS = 2000;

/** 200 with one result per item, in request order; items not reached in time are `unavailable`. */
export const handler = apiHandler(deleteContactsRoute, async ({ principal, body, headers, requestId, deadline }) =>
  withIdempotency(
    { tenantId: principal.tenant.id, operation: deleteContactsRoute.operationId, headers, request: body },
    async () => ({
      statusCode: 200,
      body: {
        results: await deleteContacts(
          principal.tenant.id,
          body.contacts.map(entryOf),
          deadline - ANSWER_MARGIN_MS,
          requestOriginOf({ requestId, headers }),
        ),
      },
    }),
  ),
);
