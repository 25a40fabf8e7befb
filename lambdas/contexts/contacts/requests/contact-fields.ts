import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';

/** The fields a request may write on a contact, with the spec's limits (create and update). */
export const contactFields = {
  displayName: z.string().check(z.minLength(1), z.maxLength(200)),
  phoneNumber: e164,
  company: z.optional(z.nullable(z.string().check(z.maxLength(200)))),
  tag: z.optional(z.nullable(z.string().check(z.maxLength(60)))),
  notes: z.optional(z.nullable(z.string().check(z.maxLength(5000)))),
};
