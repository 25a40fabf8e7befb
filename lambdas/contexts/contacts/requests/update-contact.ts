import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { contactFields } from './contact-fields';

export const UpdateContactBody = z
  .strictObject({
    displayName: z.optional(contactFields.displayName),
    phoneNumber: z.optional(contactFields.phoneNumber),
    company: contactFields.company,
    tag: contactFields.tag,
    notes: contactFields.notes,
    externalId: contactFields.externalId,
    customFields: contactFields.customFields,
  })
  .check(z.refine((body) => Object.keys(body).length > 0, { message: 'must contain at least one field', path: [] }))
  .register(z.globalRegistry, { id: 'UpdateContactRequest' });
