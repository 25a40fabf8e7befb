import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import type { CreateContactBody } from './requests/create-contact';
import type { ListContactsQuery } from './requests/list-contacts';
import type { UpdateContactBody } from './requests/update-contact';
import type { ContactDeleteItem } from './requests/delete-contacts';
import type { ContactBatchItem } from './requests/upsert-contacts';

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
        "The messaging consent of the contact's current number. Consent belongs to the number, for the whole " +
        'organization: ' +
        'a STOP (or UNSUBSCRIBE, CANCEL, END, QUIT...) from the number sets `opted_out`, a START (UNSTOP, YES) ' +
        '`opted_in`, the later one wins. ' +
        'Deleting, renumbering or re-creating contacts never changes it; a new contact for an opted-out number shows ' +
        '`opted_out`.',
    }),
    consentSource: z.nullable(z.string()),
    consentAt: z.nullable(dateTime),
    consentNote: z.nullable(z.string()),
    externalId: z.nullable(z.string()).register(z.globalRegistry, {
      description:
        "Your own id for the contact (a CRM record's id), unique within the organization; null when none was given",
    }),
    customFields: z.nullable(z.record(z.string(), z.string())).register(z.globalRegistry, {
      description: 'Your own properties of the contact, a flat object of strings; null when none were given',
    }),
    version: z
      .int()
      .check(z.gte(1))
      .register(z.globalRegistry, {
        description:
          "Grows with every change of the contact or of its number's consent (numbers may skip): of two copies of " +
          'a contact, from the API, the feed or an event, the one with the higher version is the newer. Events about ' +
          "the contact carry it too (`data.contact.version`, `consent.changed`'s `data.version`)",
      }),
  })
  .register(z.globalRegistry, { id: 'Contact' });

/**
 * What a deleted contact leaves in the feed of changes for 30 days (`GET
 * /contacts?updatedSince=...&includeDeleted=true`).
 */
export const DeletedContactSchema = z
  .object({
    id: uuid.clone().register(z.globalRegistry, { description: 'The id the contact had' }),
    deletedAt: dateTime.clone().register(z.globalRegistry, { description: 'When it was deleted' }),
    externalId: z.nullable(z.string()).register(z.globalRegistry, {
      description: 'The external id it had (your record to remove), null when it had none',
    }),
    phoneNumber: z.nullable(z.string()).register(z.globalRegistry, {
      description: 'The number it had; null only for a deletion recorded before this field existed',
    }),
    version: z.int().check(z.gte(1)).register(z.globalRegistry, {
      description: 'Above every version the contact had: the deletion is its last change',
    }),
  })
  .register(z.globalRegistry, { id: 'DeletedContact' });

export const ContactListSchema = z
  .object({
    contacts: z.array(ContactSchema),
    // The feed's cursors carry their walk's watermark after the position (`<uuid>.<epoch ms>`).
    nextCursor: z
      .nullable(
        z.string().check(z.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.\d{1,15})?$/i)),
      )
      .register(z.globalRegistry, { description: 'Pass as `cursor` to get the next page; null on the last page' }),
    deletedContacts: z.optional(z.array(DeletedContactSchema)).register(z.globalRegistry, {
      description:
        'Only with `updatedSince` and `includeDeleted=true`: the contacts deleted in the part of the feed this page ' +
        'covers, ' +
        'oldest first. Each deleted contact appears once; tombstones are kept 30 days.',
    }),
    nextUpdatedSince: z.optional(dateTime.clone()).register(z.globalRegistry, {
      description:
        'Only with `updatedSince`: where a new walk starts and loses nothing this walk has not returned, computed by ' +
        'the server from its clock (never ahead of the `Date` header). On the last page (`nextCursor` null) it is the ' +
        "`updatedSince` of your next walk: the server's time less the longest a write takes to become visible (two " +
        'minutes), or earlier when this walk passed a change still on its way; on a page with a `nextCursor`, where ' +
        'to start again if you stop there',
    }),
  })
  .register(z.globalRegistry, { id: 'ContactList' });
export const ContactEnvelopeSchema = z
  .object({ contact: ContactSchema })
  .register(z.globalRegistry, { id: 'ContactEnvelope' });
export const ContactCreatedSchema = z
  .object({ contact: ContactSchema, adopted: z.boolean() })
  .register(z.globalRegistry, { id: 'ContactCreated' });

export const CONTACT_BATCH_STATUSES = [
  'created',
  'updated',
  'adopted',
  'unchanged',
  'conflict',
  'invalid',
  'unavailable',
] as const;
export type ContactBatchStatus = (typeof CONTACT_BATCH_STATUSES)[number];

/** The answer for one item of `POST /contacts/batch`, at its position in the request. */
export const ContactBatchResultSchema = z
  .object({
    index: z
      .int()
      .check(z.gte(0))
      .register(z.globalRegistry, { description: "The item's position in the request's `contacts` (0-based)" }),
    status: z.enum(CONTACT_BATCH_STATUSES).register(z.globalRegistry, {
      description:
        '`created`: a new contact. `updated`: the contact matched (by `externalId`, else by number) took the fields ' +
        'given. ' +
        '`adopted`: the auto-created contact of the number was named, as `POST /contacts` does. `unchanged`: the ' +
        'matched contact ' +
        'already had every field given: nothing was written. `conflict`: another contact holds the number or the ' +
        'external id ' +
        '(`contactId` names it), or an earlier item of the batch names the contact the number or external id ' +
        'names (a batch changes each contact once, judged in request order); nothing was written. `invalid`: the item is not a `ContactBatchItem` (a field ' +
        'missing, of the wrong type or out of its limits, an unknown field), or repeats the number or external id ' +
        'of an earlier item; `error` names the field; nothing ' +
        "was written. `unavailable`: the organization's data was too busy to take this item in time; nothing was " +
        'written for it: ' +
        'send it again. Clients must tolerate statuses added later.',
    }),
    contactId: z.nullable(uuid.clone()).register(z.globalRegistry, {
      description:
        'The contact written or matched; for `conflict`, the contact holding the number or external id. Null for ' +
        '`invalid` and `unavailable`',
    }),
    externalId: z
      .nullable(z.string())
      .register(z.globalRegistry, { description: "The item's `externalId`, when it had a valid one" }),
    error: z.nullable(z.string()).register(z.globalRegistry, {
      description:
        'For `conflict`, `invalid` and `unavailable`: what is wrong, naming the field as `contacts[<index>].<field>`',
    }),
    code: z
      .nullable(z.enum(['contact_conflict', 'validation_failed', 'temporarily_unavailable']))
      .register(z.globalRegistry, {
        description: 'For `conflict`, `invalid` and `unavailable`: the error code a single request would have answered',
      }),
  })
  .register(z.globalRegistry, { id: 'ContactBatchResult' });

export const ContactBatchSchema = z
  .object({ results: z.array(ContactBatchResultSchema) })
  .register(z.globalRegistry, { id: 'ContactBatch' });

export const CONTACT_DELETE_STATUSES = ['deleted', 'not_found', 'invalid', 'unavailable'] as const;
export type ContactDeleteStatus = (typeof CONTACT_DELETE_STATUSES)[number];

/** The answer for one item of `POST /contacts/batch/delete`, at its position in the request. */
export const ContactDeleteResultSchema = z
  .object({
    index: z
      .int()
      .check(z.gte(0))
      .register(z.globalRegistry, { description: "The item's position in the request's `contacts` (0-based)" }),
    status: z.enum(CONTACT_DELETE_STATUSES).register(z.globalRegistry, {
      description:
        '`deleted`: the contact is gone, its tombstone is in the feed of changes and `contact.deleted` is sent. ' +
        '`not_found`: no contact had the `id` or held the `externalId` when the item ran, or an earlier item of ' +
        'the batch named the same contact (that item answers for it; `error` names it). `invalid`: the item is not ' +
        'a `ContactDeleteItem` (neither or both of `id` and `externalId`, a malformed value, an unknown field); ' +
        "`error` names the field; nothing was deleted. `unavailable`: the organization's data was too busy, or the " +
        "request's time ran out, before this item; nothing was deleted for it: send it again. Clients must " +
        'tolerate statuses added later.',
    }),
    contactId: z.nullable(uuid.clone()).register(z.globalRegistry, {
      description:
        'The contact the item named: its `id`, or the contact found holding its `externalId`. Null for `invalid`, ' +
        'and for an `externalId` no contact held',
    }),
    externalId: z
      .nullable(z.string())
      .register(z.globalRegistry, { description: "The item's `externalId`, when it named the contact by one" }),
    error: z.nullable(z.string()).register(z.globalRegistry, {
      description:
        'For `not_found`, `invalid` and `unavailable`: what is wrong, naming the field as ' +
        '`contacts[<index>].<field>`',
    }),
    code: z.nullable(z.enum(['not_found', 'validation_failed', 'temporarily_unavailable'])).register(z.globalRegistry, {
      description: 'For `not_found`, `invalid` and `unavailable`: the error code a single request would have answered',
    }),
  })
  .register(z.globalRegistry, { id: 'ContactDeleteResult' });

export const ContactDeleteBatchSchema = z
  .object({ results: z.array(ContactDeleteResultSchema) })
  .register(z.globalRegistry, { id: 'ContactDeleteBatch' });

export type Contact = z.infer<typeof ContactSchema>;
export type DeletedContact = z.infer<typeof DeletedContactSchema>;
export type ContactBatchResult = z.infer<typeof ContactBatchResultSchema>;
export type ContactBatchItemInput = z.infer<typeof ContactBatchItem>;
export type ContactDeleteResult = z.infer<typeof ContactDeleteResultSchema>;
export type ContactDeleteItemInput = z.infer<typeof ContactDeleteItem>;
export type CreateContactInput = z.infer<typeof CreateContactBody>;
export type UpdateContactInput = z.infer<typeof UpdateContactBody>;
/** The list's parameters as the domain takes them: `includeDeleted` defaults to false. */
export type ListContactsInput = Omit<z.infer<typeof ListContactsQuery>, 'includeDeleted'> & {
  includeDeleted?: boolean;
};
