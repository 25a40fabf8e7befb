import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { nextCursorField } from '../../shared/schemas/next-cursor';
import type { CreateContactBody } from './requests/create-contact';
import type { ListContactsQuery } from './requests/list-contacts';
import type { UpdateContactBody } from './requests/update-contact';

/**
 * The shapes of contacts: the resource, its list and envelopes (responses), and the input types of
 * the request schemas (./requests/, one module per route so a handler's bundle builds only its
 * own). They type the domain and generate the OpenAPI components.
 * Written as lambdas/shared/schemas/zod-english.ts says (zod/mini; `register` only in place).
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

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
    consentStatus: z.enum(CONSENT_STATUSES).register(z.globalRegistry, {
      description:
        "The messaging consent of the contact's current number. Consent belongs to the number, for the whole organization: " +
        'a STOP (or UNSUBSCRIBE, CANCEL, END, QUIT...) from the number sets `opted_out`, a START (UNSTOP, YES) `opted_in`, the later one wins. ' +
        'Deleting, renumbering or re-creating contacts never changes it; a new contact for an opted-out number shows `opted_out`.',
    }),
    consentSource: z.nullable(z.string()),
    consentAt: z.nullable(dateTime),
    consentNote: z.nullable(z.string()),
  })
  .register(z.globalRegistry, { id: 'Contact' });

export const ContactListSchema = z
  .object({ contacts: z.array(ContactSchema), nextCursor: nextCursorField })
  .register(z.globalRegistry, { id: 'ContactList' });
export const ContactEnvelopeSchema = z.object({ contact: ContactSchema }).register(z.globalRegistry, { id: 'ContactEnvelope' });
export const ContactCreatedSchema = z
  .object({ contact: ContactSchema, adopted: z.boolean() })
  .register(z.globalRegistry, { id: 'ContactCreated' });

export type Contact = z.infer<typeof ContactSchema>;
export type CreateContactInput = z.infer<typeof CreateContactBody>;
export type UpdateContactInput = z.infer<typeof UpdateContactBody>;
export type ListContactsInput = z.infer<typeof ListContactsQuery>;
