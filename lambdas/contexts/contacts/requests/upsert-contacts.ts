import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { contactFields } from './contact-fields';

/** A batch holds at most this many contacts: a transaction's 100 items are per contact, so no bound from there. */
export const MAX_BATCH_CONTACTS = 100;

/**
 * One contact of `POST /contacts/batch`: the fields of `POST /contacts`. Validated item by item
 * (a bad item is answered `invalid` at its index and the others are written), so the request
 * schema below takes the items as they come and the handler parses each with this one.
 */
export const ContactBatchItem = z.strictObject(contactFields).register(z.globalRegistry, { id: 'ContactBatchItem' });

export const UpsertContactsBody = z
  .strictObject({
    contacts: z
      .array(z.unknown())
      .check(z.minLength(1), z.maxLength(MAX_BATCH_CONTACTS))
      .register(z.globalRegistry, {
        description:
          `1 to ${MAX_BATCH_CONTACTS} contacts, each created or updated by its \`externalId\` when it has one, else ` +
          `by its number. ` +
          'Each is validated on its own: a bad one is answered `invalid` and does not stop the others.',
        // The OpenAPI document shows what each item must be (the generator reads `documentedAs`).
        documentedAs: {
          type: 'array',
          items: { $ref: '#/components/schemas/ContactBatchItem' },
          minItems: 1,
          maxItems: MAX_BATCH_CONTACTS,
        },
      }),
  })
  .register(z.globalRegistry, { id: 'UpsertContactsRequest' });
