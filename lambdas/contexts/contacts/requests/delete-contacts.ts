import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { externalId } from './contact-fields';
import { itemJudgedAlone, MAX_BATCH_CONTACTS } from './upsert-contacts';

/**
 * One contact of `POST /contacts/batch/delete`: named by its `id` or by its `externalId`, exactly
 * one of the two. Validated item by item, as the batch upsert's items are: a bad item is answered
 * `invalid` at its index and the others are deleted.
 */
export const ContactDeleteItem = z
  .strictObject({
    id: z.optional(z.uuid()),
    externalId: z.optional(externalId),
  })
  .check(
    z.superRefine((item, ctx) => {
      if (item.id !== undefined && item.externalId !== undefined)
        ctx.addIssue({ code: 'custom', path: ['externalId'], message: 'cannot be combined with id', input: item });
      else if (item.id === undefined && item.externalId === undefined)
        ctx.addIssue({ code: 'custom', path: ['id'], message: 'is required (or externalId)', input: item });
    }),
  )
  .register(z.globalRegistry, {
    id: 'ContactDeleteItem',
    description: 'A contact to delete, named by its `id` or by its `externalId`: exactly one of the two.',
    // JSON Schema says "exactly one of the two" as two closed objects, which the check above says to zod.
    documentedAs: {
      oneOf: [
        {
          title: 'By id',
          type: 'object',
          properties: { id: { type: 'string', format: 'uuid', description: "The contact's id" } },
          required: ['id'],
          additionalProperties: false,
        },
        {
          title: 'By external id',
          type: 'object',
          properties: {
            externalId: {
              type: 'string',
              minLength: 1,
              maxLength: 255,
              description: 'Your own id of the contact (compared exactly)',
            },
          },
          required: ['externalId'],
          additionalProperties: false,
        },
      ],
    },
  });

/**
 * The body: only its shape is checked here (a 400 for the batch); each item is judged on its own
 * by `ContactDeleteItem`, so the document describes the items as the service takes them.
 */
export const DeleteContactsBody = z
  .strictObject({
    contacts: z
      .array(itemJudgedAlone('ContactDeleteItem'))
      .check(z.minLength(1), z.maxLength(MAX_BATCH_CONTACTS))
      .register(z.globalRegistry, {
        description:
          `1 to ${MAX_BATCH_CONTACTS} contacts to delete, each named by \`id\` or \`externalId\` ` +
          '(`ContactDeleteItem`). Each is judged on its own: a bad one is answered `invalid` and does not stop the ' +
          'others.',
      }),
  })
  .register(z.globalRegistry, { id: 'DeleteContactsRequest' });
