import * as z from 'zod';
import { e164 } from './phone';
import { SCOPES } from './scopes';

/**
 * The API's resource and request shapes. These zod schemas validate requests at the edge, type
 * the handlers and generate the OpenAPI document, so the three cannot disagree.
 * `.meta({ id })` names a schema as an OpenAPI component.
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

// ---------- resources (responses) ----------

export const ErrorSchema = z
  .object({
    error: z.string().meta({ description: 'Human-readable message; names the failing field on validation errors' }),
    code: z.string().optional().meta({ description: 'Machine-readable code, e.g. not_found' }),
    contactId: uuid.optional().meta({ description: 'On 409 contact conflicts: the contact that holds the number' }),
  })
  .meta({ id: 'Error' });

export const TenantSchema = z
  .object({ id: uuid, name: z.string(), slug: z.string(), plan: z.string() })
  .meta({ id: 'Tenant' });

export const ApiKeyInfoSchema = z
  .object({
    id: uuid,
    name: z.string(),
    prefix: z.string().meta({ description: 'The visible first characters of the key' }),
    expiresAt: nullable(dateTime),
    createdAt: dateTime,
  })
  .meta({ id: 'ApiKeyInfo' });

export const MeSchema = z
  .object({
    tenant: nullable(TenantSchema),
    apiKey: nullable(ApiKeyInfoSchema),
    permissions: z.array(z.enum(SCOPES)),
    rateLimit: z.object({ requestsPerMinute: z.number().int() }),
  })
  .meta({ id: 'Me' });

export const CallSchema = z
  .object({
    id: uuid,
    direction: z.enum(['inbound', 'outbound']),
    fromNumber: z.string(),
    toNumber: z.string(),
    status: z.string().meta({
      description: 'Open set: queued, ringing, in-progress, completed, failed, no-answer, and others; tolerate unknown values',
    }),
    startedAt: dateTime,
    answeredAt: nullable(dateTime),
    endedAt: nullable(dateTime),
    durationSec: nullable(z.number().int()),
    isInternal: z.boolean(),
    agentId: nullable(uuid),
    contactId: nullable(uuid),
  })
  .meta({ id: 'Call' });

export const CONTACT_SOURCES = ['manual', 'auto_inbound', 'auto_outbound'] as const;
export const CONSENT_STATUSES = ['unknown', 'opted_in', 'opted_out'] as const;

export const ContactSchema = z
  .object({
    id: uuid,
    tenantId: uuid,
    displayName: z.string(),
    phoneNumber: z.string(),
    company: nullable(z.string()),
    tag: nullable(z.string()),
    notes: nullable(z.string()),
    createdByAgentId: nullable(uuid),
    createdAt: dateTime,
    updatedAt: dateTime,
    normalizedNumber: nullable(z.string()),
    isAutoCreated: z.boolean(),
    source: z.enum(CONTACT_SOURCES),
    consentStatus: z.enum(CONSENT_STATUSES),
    consentSource: nullable(z.string()),
    consentAt: nullable(dateTime),
    consentNote: nullable(z.string()),
  })
  .meta({ id: 'Contact' });

const cursor = nullable(uuid).meta({ description: 'Pass as `cursor` to get the next page; null on the last page' });

export const CallListSchema = z.object({ calls: z.array(CallSchema), nextCursor: cursor }).meta({ id: 'CallList' });
export const CallEnvelopeSchema = z.object({ call: CallSchema }).meta({ id: 'CallEnvelope' });
export const ContactListSchema = z
  .object({ contacts: z.array(ContactSchema), nextCursor: cursor })
  .meta({ id: 'ContactList' });
export const ContactEnvelopeSchema = z.object({ contact: ContactSchema }).meta({ id: 'ContactEnvelope' });
export const ContactCreatedSchema = z
  .object({ contact: ContactSchema, adopted: z.boolean() })
  .meta({ id: 'ContactCreated' });

// ---------- requests ----------

/**
 * `limit`: default 50, at least 1, above 100 clamped to 100 (spec section 4). Query values arrive
 * as strings; anything that is not a whole number is refused.
 */
export const limitParam = z
  .string()
  .regex(/^\d+$/, 'must be a whole number from 1 to 100')
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1'))
  .transform((n) => Math.min(n, 100))
  .optional()
  .transform((n) => n ?? 50)
  .meta({ description: 'Page size; default 50, 1 to 100, larger values are clamped to 100' });

export const cursorParam = uuid.optional().meta({ description: 'The nextCursor of the previous page' });

export const ListCallsQuery = z.strictObject({
  limit: limitParam,
  cursor: cursorParam,
  direction: z.enum(['inbound', 'outbound']).optional(),
  since: dateTime.optional().meta({ description: 'Only calls that started at or after this instant (ISO 8601)' }),
});

export const ListContactsQuery = z.strictObject({
  limit: limitParam,
  cursor: cursorParam,
  search: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Case-insensitive match on display name or company, or digits of the number' }),
  includeAutoCreated: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v !== 'false')
    .meta({ description: 'Whether contacts the system created from call history are included (default true)' }),
});

export const IdPath = z.object({ id: uuid });

const contactFields = {
  displayName: z.string().min(1).max(200),
  phoneNumber: e164,
  company: z.string().max(200).nullable().optional(),
  tag: z.string().max(60).nullable().optional(),
  notes: z.string().max(5000).nullable().optional(),
};

export const CreateContactBody = z.strictObject(contactFields).meta({ id: 'CreateContactRequest' });

export const UpdateContactBody = z
  .strictObject({
    displayName: contactFields.displayName.optional(),
    phoneNumber: contactFields.phoneNumber.optional(),
    company: contactFields.company,
    tag: contactFields.tag,
    notes: contactFields.notes,
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'must contain at least one field', path: [] })
  .meta({ id: 'UpdateContactRequest' });

export type Call = z.infer<typeof CallSchema>;
export type Contact = z.infer<typeof ContactSchema>;
export type Me = z.infer<typeof MeSchema>;
export type CreateContactInput = z.infer<typeof CreateContactBody>;
export type UpdateContactInput = z.infer<typeof UpdateContactBody>;
export type ListCallsInput = z.infer<typeof ListCallsQuery>;
export type ListContactsInput = z.infer<typeof ListContactsQuery>;
