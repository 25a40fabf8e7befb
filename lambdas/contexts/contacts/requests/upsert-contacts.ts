import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { contactFields } from './contact-fields';

/**
 * An item of a batch as the document describes it: any value is taken, and one that is not a `component` is
 * answered `invalid` at its index, never a 400 for the batch (so a contract generated from the document agrees).
 */
export const itemJudgedAlone = (component: string) =>
  z.unknown().register(z.globalRegistry, {
    documentedAs: {
      anyOf: [
        { $ref: `#/components/schemas/${component}` },
        { description: 'Any other value is taken too, and answered `invalid` at its index (`error` names the field)' },
      ],
    },
  });

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
      .array(itemJudgedAlone('ContactBatchItem'))
      .check(z.minLength(1), z.maxLength(MAX_BATCH_CONTACTS))
      .register(z.globalRegistry, {
        description:
          `1 to ${MAX_BATCH_CONTACTS} contacts, each created or updated by its \`externalId\` when it has one, else ` +
          `by its number. ` +
          'Each is judged on its own against `ContactBatchItem`: a bad one (a field missing, of the wrong type or ' +
          'out of its limits, an unknown field) is answered `invalid` in `results` and does not stop the others.',
      }),
  })
  .register(z.globalRegistry, { id: 'UpsertContactsRequest' });
