import { DeleteContactsBody } from '../../../contexts/contacts/requests/delete-contacts';
import { MAX_BATCH_CONTACTS } from '../../../contexts/contacts/requests/upsert-contacts';
import type { RouteSpec } from '../../http/route-spec';

export const deleteContactsRoute = {
  operationId: 'deleteContacts',
  method: 'POST',
  path: '/contacts/batch/delete',
  handler: 'lambdas/handlers/api/delete-contacts.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  tag: 'Contacts',
  summary: `Delete up to ${MAX_BATCH_CONTACTS} contacts in one request, each by its id or its external id`,
  body: DeleteContactsBody,
  responses: { 200: 'ContactDeleteBatch' },
  errors: [],
  idempotent: true,
  // 100 deletes, each a read and a transaction, as `DELETE /contacts/{id}` writes it: about a second on DynamoDB; the
  // batch watches API Gateway's 29 s and answers what it could not reach `unavailable`.
  timeoutSeconds: 28,
  description:
    `Up to ${MAX_BATCH_CONTACTS} contacts, each named by \`id\` or by \`externalId\` (exactly one), each deleted ` +
    'on its own as `DELETE /contacts/{id}` deletes it (its number and external id are freed, its tombstone joins ' +
    'the feed of changes and `contact.deleted` is sent), and answered in `results`, one per item in request order ' +
    '(`index`): `deleted`, `not_found`, `invalid` (naming `contacts[<index>].<field>`; the others still run) or ' +
    '`unavailable` (nothing deleted for it: send it again). Items naming the same contact (twice by id or by ' +
    'external id, or once by each) delete it once: the first answers for it and the later ones are `not_found`, ' +
    'naming it. The request counts once against the rate limit. With an `Idempotency-Key`, a retry answers ' +
    'exactly what the first request did.',
} satisfies RouteSpec;
