import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import type { CreateContactBody } from './requests/create-contact';
import type { ListCallsQuery } from '../calls/requests/list-calls';
import type { ListContactsQuery } from './requests/list-contacts';
import type { UpdateContactBody } from './requests/update-contact';
import { SCOPES } from '../tenants/scopes';

/**
 * The API's resource and request shapes. These zod schemas validate requests at the edge, type
 * the handlers and generate the OpenAPI document, so the three cannot disagree.
 * `zod/mini`, not classic zod: a quarter of the size and no per-instance methods to build at init
 * (bench/README.md). `.register(z.globalRegistry, { id })` names a schema as an OpenAPI component.
 * `register` annotates the instance itself, so it is only called on a schema built in place; a
 * shared one (`uuid`, `dateTime`, `e164`) is cloned first, or every use would carry the text.
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

// ---------- resources (responses) ----------

export const ErrorSchema = z
  .object({
    error: z.string().register(z.globalRegistry, { description: 'Human-readable message; names the failing field on validation errors' }),
    code: z.optional(z.string()).register(z.globalRegistry, { description: 'Machine-readable code, e.g. not_found' }),
    contactId: z.optional(uuid).register(z.globalRegistry, { description: 'On 409 contact conflicts: the contact that holds the number' }),
  })
  .register(z.globalRegistry, { id: 'Error' });

export const TenantSchema = z
  .object({ id: uuid, name: z.string(), slug: z.string(), plan: z.string() })
  .register(z.globalRegistry, { id: 'Tenant' });

export const ApiKeyInfoSchema = z
  .object({
    id: uuid,
    name: z.string(),
    prefix: z.string().register(z.globalRegistry, { description: 'The visible first characters of the key' }),
    expiresAt: z.nullable(dateTime),
    createdAt: dateTime,
  })
  .register(z.globalRegistry, { id: 'ApiKeyInfo' });

export const MeSchema = z
  .object({
    tenant: z.nullable(TenantSchema),
    apiKey: z.nullable(ApiKeyInfoSchema),
    permissions: z.array(z.enum(SCOPES)),
    rateLimit: z.object({ requestsPerMinute: z.int() }),
  })
  .register(z.globalRegistry, { id: 'Me' });

export const CallSchema = z
  .object({
    id: uuid,
    direction: z.enum(['inbound', 'outbound']),
    fromNumber: z.string(),
    toNumber: z.string(),
    status: z.string().register(z.globalRegistry, {
      description: 'Open set: queued, ringing, in-progress, completed, failed, no-answer, and others; tolerate unknown values',
    }),
    startedAt: dateTime,
    answeredAt: z.nullable(dateTime),
    endedAt: z.nullable(dateTime),
    durationSec: z.nullable(z.int()),
    isInternal: z.boolean(),
    agentId: z.nullable(uuid),
    contactId: z.nullable(uuid),
  })
  .register(z.globalRegistry, { id: 'Call' });

export const CONTACT_SOURCES = ['manual', 'auto_inbound', 'auto_outbound'] as const;
export const CONSENT_STATUSES = ['unknown', 'opted_in', 'opted_out'] as const;

export const ContactSchema = z
  .object({
    id: uuid,
    tenantId: uuid,
    displayName: z.string(),
    phoneNumber: z.string(),
    company: z.nullable(z.string()),
    tag: z.nullable(z.string()),
    notes: z.nullable(z.string()),
    createdByAgentId: z.nullable(uuid),
    createdAt: dateTime,
    updatedAt: dateTime,
    normalizedNumber: z.nullable(z.string()),
    isAutoCreated: z.boolean(),
    source: z.enum(CONTACT_SOURCES),
    consentStatus: z.enum(CONSENT_STATUSES),
    consentSource: z.nullable(z.string()),
    consentAt: z.nullable(dateTime),
    consentNote: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'Contact' });

const cursor = z.nullable(uuid).register(z.globalRegistry, { description: 'Pass as `cursor` to get the next page; null on the last page' });

export const CallListSchema = z.object({ calls: z.array(CallSchema), nextCursor: cursor }).register(z.globalRegistry, { id: 'CallList' });
export const CallEnvelopeSchema = z.object({ call: CallSchema }).register(z.globalRegistry, { id: 'CallEnvelope' });
export const ContactListSchema = z
  .object({ contacts: z.array(ContactSchema), nextCursor: cursor })
  .register(z.globalRegistry, { id: 'ContactList' });
export const ContactEnvelopeSchema = z.object({ contact: ContactSchema }).register(z.globalRegistry, { id: 'ContactEnvelope' });
export const ContactCreatedSchema = z
  .object({ contact: ContactSchema, adopted: z.boolean() })
  .register(z.globalRegistry, { id: 'ContactCreated' });

// ---------- requests ----------

// Each in its own module (requests/), so a handler's bundle builds only the schemas its route
// validates (lambdas/api/operations); here for everything that wants them all.
export { cursorParam, limitParam } from '../../shared/schemas/paging';
export { ListCallsQuery } from '../calls/requests/list-calls';
export { ListContactsQuery } from './requests/list-contacts';
export { IdPath } from '../../shared/schemas/id-path';
export { CreateContactBody } from './requests/create-contact';
export { UpdateContactBody } from './requests/update-contact';

export type Call = z.infer<typeof CallSchema>;
export type Contact = z.infer<typeof ContactSchema>;
export type Me = z.infer<typeof MeSchema>;
export type CreateContactInput = z.infer<typeof CreateContactBody>;
export type UpdateContactInput = z.infer<typeof UpdateContactBody>;
export type ListCallsInput = z.infer<typeof ListCallsQuery>;
export type ListContactsInput = z.infer<typeof ListContactsQuery>;
