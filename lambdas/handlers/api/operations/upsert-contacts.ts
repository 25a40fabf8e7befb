import { MAX_BATCH_CONTACTS, UpsertContactsBody } from '../../../contexts/contacts/requests/upsert-contacts';
import type { RouteSpec } from '../../http/route-spec';

/** The largest batch body: 100 of the largest contacts, with room for JSON's escapes. */
const BATCH_BODY_BYTES = 4 * 1024 * 1024;

export const upsertContactsRoute = {
  operationId: 'upsertContacts',
  method: 'POST',
  path: '/contacts/batch',
  handler: 'lambdas/handlers/api/upsert-contacts.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  tag: 'Contacts',
  summary: `Create or update up to ${MAX_BATCH_CONTACTS} contacts in one request, each by its external id or its number`,
  body: UpsertContactsBody,
  responses: { 200: 'ContactBatch' },
  errors: [],
  idempotent: true,
  maxBodyBytes: BATCH_BODY_BYTES,
  // 100 contacts, each its own transaction: about a second on DynamoDB, and the rest of the time for a busy
  // organization.
  timeoutSeconds: 28,
  description:
    `Up to ${MAX_BATCH_CONTACTS} contacts (the fields of \`POST /contacts\`), each created or updated on its own and ` +
    `answered in ` +
    '`results`, one per item in request order (`index`). An item with an `externalId` that a contact holds updates ' +
    'that contact; ' +
    "otherwise the contact holding the item's number is updated (an auto-created one is adopted, as `POST /contacts` " +
    'does; a contact ' +
    'with another external id is a `conflict`); otherwise the contact is created. Fields an item leaves out stay as ' +
    'they are on a ' +
    'contact it updates; `unchanged` when it already had every field given. A bad item is answered `invalid` (naming ' +
    '`contacts[<index>].<field>`) and the others are still written; a batch may name each number and each external ' +
    'id once. ' +
    'The request counts once against the rate limit. With an `Idempotency-Key`, a retry answers exactly what the ' +
    'first request ' +
    'did (items answered `unavailable` included: send those again in a new batch, with a new key). The body may be ' +
    'up to 4 MiB.',
} satisfies RouteSpec;
