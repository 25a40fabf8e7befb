import { uuidv7 } from '../../shared/ids';
import { nowIso, str, type Item } from '../../shared/table/dynamo';
import { ENTITY_SK, ownPartitionKey, PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { FIRST_ROW_SEQUENCE, ROW_SEQUENCE, rowSequenceOf } from '../../shared/table/row-sequence';
import { CHANGE_REQUEST, CHANGED_AT, ROW_TYPES, type ChangeRequest } from '../../shared/table/row-types';
import { GSIS, TTL_ATTRIBUTE } from '../../shared/table/table-schema';
import { consentAttributes, type Consent } from '../consent/ledger';
import { changeIndexKeys, TOMBSTONE_RETENTION_SECONDS, TOMBSTONE_SK } from './contact-changes';
import { insertIndex, SEARCH_INDEX_ATTRIBUTE } from './search-rows';
import type { Contact, CreateContactInput } from './schemas';

/**
 * The contact entity: its keys and its claims' keys, its rows as they are stored (toItem,
 * fromItem, a new contact's rows, a deleted one's tombstone). Each contact has a partition of its
 * own (`T#<tenant>#CONTACT#<id>`), and so does each claim: a number's (`T#<tenant>#NUMBER#<e164>` -> contactId) and an
 * external
 * id's (`T#<tenant>#EXTERNAL_ID#<id>` -> contactId), each written in the same transaction as every
 * change of what it claims, so an organization never has two contacts for one number or one
 * external id, whatever runs concurrently. Nothing of a contact's write lands on the
 * organization's own partition: an import of many contacts at once spreads over partitions, and
 * the lists are indexes (`directory`, gsi1 for named contacts, `changes`, `externalIds`;
 * docs/capacity.md).
 */
export const contactKey = (tenantId: string, contactId: string) => ownPartitionKey(tenantId, 'contact', contactId);

export const numberClaimKey = (tenantId: string, number: string) => ownPartitionKey(tenantId, 'numberClaim', number);

export const externalIdClaimKey = (tenantId: string, externalId: string) =>
  ownPartitionKey(tenantId, 'externalIdClaim', externalId);

/** Where a deleted contact's tombstone lives: beside the contact, in its partition. */
export const tombstoneKey = (tenantId: string, contactId: string) => ({
  pk: contactKey(tenantId, contactId).pk,
  sk: TOMBSTONE_SK,
});

export type NumberClaim = { contactId: string; named: boolean };

export const claimItem = (tenantId: string, number: string, claim: NumberClaim): Item => ({
  ...numberClaimKey(tenantId, number),
  type: 'numberClaim',
  ...claim,
});

export const externalIdClaimItem = (tenantId: string, externalId: string, contactId: string): Item => ({
  ...externalIdClaimKey(tenantId, externalId),
  type: 'externalIdClaim',
  contactId,
});

export const namedIndexKeys = (tenantId: string, contactId: string) => ({
  [GSIS.gsi1.partitionKey]: tenantScopedPk(tenantId, PREFIX.namedContacts),
  [GSIS.gsi1.sortKey]: `${PREFIX.contact}${contactId}`,
});

const directoryIndexKeys = (tenantId: string, contactId: string) => ({
  [GSIS.directory.partitionKey]: tenantScopedPk(tenantId, PREFIX.contacts),
  [GSIS.directory.sortKey]: `${PREFIX.contact}${contactId}`,
});

export const externalIdIndexKeys = (tenantId: string, externalId: string) => ({
  [GSIS.externalIds.partitionKey]: externalIdClaimKey(tenantId, externalId).pk,
  [GSIS.externalIds.sortKey]: ENTITY_SK.contact,
});

/** Custom fields as stored: an empty object is none at all; a key given `null` (removed) is none. */
export function customFieldsOf(value: unknown): Record<string, string> | null {
  if (!value || typeof value !== 'object') return null;
  const fields = Object.entries(value).filter(([, v]) => typeof v === 'string');
  return fields.length > 0 ? (Object.fromEntries(fields) as Record<string, string>) : null;
}

/**
 * Keys and values of a contact's custom fields together, in characters: stored beside them (`customFieldsLength`)
 * and moved by each write by what it changes, so a condition can hold the documented total against any number of
 * concurrent writers of different keys (contacts.ts, `customFieldsWrite`).
 */
export const CUSTOM_FIELDS_LENGTH = 'customFieldsLength';
export const customFieldsLength = (fields: Record<string, string> | null): number =>
  Object.entries(fields ?? {}).reduce((sum, [key, value]) => sum + key.length + value.length, 0);

/** The API request a write comes from; null for the carrier's and the system's writes. */
export type RequestOrigin = ChangeRequest | null;

/** The attributes that name the request of a row's latest change (`undefined` where there is none). */
export const originAttributes = (origin: RequestOrigin): Record<string, string | undefined> => ({
  [CHANGE_REQUEST.id]: origin?.id,
  [CHANGE_REQUEST.idempotencyKey]: origin?.idempotencyKey ?? undefined,
});

/**
 * A contact row carries the consent of its number: a copy of the number's ledger row
 * (consent/ledger.ts), written in the same transaction as every ledger change
 * (./consent-copies.ts) and by every write that gives the contact a number (create, renumber:
 * `ledgerSnapshot`'s check keeps the copy the ledger's). The ledger stays the truth: it outlives
 * the contact's delete and renumber. So a contact is one read and a page of contacts one Query.
 * `externalId` and `customFields` are stored only when set (null reads as absent).
 */
export function toItem(contact: Contact, origin: RequestOrigin = null): Item {
  const { externalId, customFields, version: _version, ...fields } = contact;
  const changedAt = new Date(contact.updatedAt);
  return {
    ...contactKey(contact.tenantId, contact.id),
    ...directoryIndexKeys(contact.tenantId, contact.id),
    // Sparse index: only named contacts appear in it, so includeAutoCreated=false is a plain query.
    ...(!contact.isAutoCreated && namedIndexKeys(contact.tenantId, contact.id)),
    ...(externalId !== null && externalIdIndexKeys(contact.tenantId, externalId)),
    ...changeIndexKeys(contact.tenantId, changedAt),
    type: ROW_TYPES.contact,
    ...fields,
    ...(externalId !== null && { externalId }),
    ...(customFieldsOf(customFields) && { customFields, [CUSTOM_FIELDS_LENGTH]: customFieldsLength(customFields) }),
    ...FIRST_ROW_SEQUENCE,
    ...Object.fromEntries(Object.entries(originAttributes(origin)).filter(([, v]) => v !== undefined)),
    [CHANGED_AT]: changedAt.getTime(),
    [SEARCH_INDEX_ATTRIBUTE]: insertIndex(contact.tenantId, contact.id, contact).fingerprint,
  };
}

export const withConsentFields = (
  consent: Consent,
): Pick<Contact, 'consentStatus' | 'consentSource' | 'consentAt' | 'consentNote'> =>
  consentAttributes(consent) as Pick<Contact, 'consentStatus' | 'consentSource' | 'consentAt' | 'consentNote'>;

export function fromItem(item: Item): Contact {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    displayName: item.displayName as string,
    phoneNumber: item.phoneNumber as string,
    company: str(item.company),
    tag: str(item.tag),
    notes: str(item.notes),
    createdByAgentId: str(item.createdByAgentId),
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
    normalizedNumber: str(item.normalizedNumber),
    isAutoCreated: item.isAutoCreated === true,
    source: item.source as Contact['source'],
    consentStatus: item.consentStatus as Contact['consentStatus'],
    consentSource: str(item.consentSource),
    consentAt: str(item.consentAt),
    consentNote: str(item.consentNote),
    externalId: str(item.externalId),
    customFields: customFieldsOf(item.customFields),
    version: rowSequenceOf(item) || 1,
  };
}

export function newContact(
  tenantId: string,
  fields: Partial<Contact> & Pick<Contact, 'displayName' | 'phoneNumber' | 'source'>,
  now: Date,
): Contact {
  const at = nowIso(now);
  return {
    id: uuidv7(now),
    tenantId,
    company: null,
    tag: null,
    notes: null,
    createdByAgentId: null,
    createdAt: at,
    updatedAt: at,
    normalizedNumber: fields.phoneNumber,
    isAutoCreated: fields.source !== 'manual',
    consentStatus: 'unknown',
    consentSource: null,
    consentAt: null,
    consentNote: null,
    externalId: null,
    customFields: null,
    version: 1,
    ...fields,
  };
}

/** A contact as POST /contacts (or a batch's new contact) creates it. */
export const manualContact = (tenantId: string, input: CreateContactInput, now: Date): Contact =>
  newContact(
    tenantId,
    {
      displayName: input.displayName,
      phoneNumber: input.phoneNumber,
      company: input.company ?? null,
      tag: input.tag ?? null,
      notes: input.notes ?? null,
      externalId: input.externalId ?? null,
      customFields: customFieldsOf(input.customFields),
      source: 'manual',
    },
    now,
  );

/** The rows a new contact is stored as: its claims, the contact, its search entries. */
export function rowsOfNewContact(contact: Contact, origin: RequestOrigin = null) {
  return {
    claim: claimItem(contact.tenantId, contact.normalizedNumber as string, {
      contactId: contact.id,
      named: !contact.isAutoCreated,
    }),
    externalIdClaim:
      contact.externalId !== null ? externalIdClaimItem(contact.tenantId, contact.externalId, contact.id) : undefined,
    row: toItem(contact, origin),
    entries: insertIndex(contact.tenantId, contact.id, contact).writes,
  };
}

/**
 * The rows `createContact` writes for a number nobody holds, for bulk loads (the bench's scale
 * section): the same items, without the transaction's conditions, so a loader can batch them.
 */
export function newContactRows(tenantId: string, input: CreateContactInput, now = new Date()): Item[] {
  const { claim, externalIdClaim, row, entries } = rowsOfNewContact(manualContact(tenantId, input, now));
  return [
    claim,
    ...(externalIdClaim ? [externalIdClaim] : []),
    row,
    ...entries.flatMap((write) => (write.Put ? [write.Put.Item as Item] : [])),
  ];
}

/**
 * What a deleted contact leaves in the feed of changes, kept 30 days: its id, when it went, and what a mirror finds
 * its record by (the external id and the number it had); the request that deleted it, for contact.deleted.
 */
export function tombstoneItem(
  contact: Pick<Contact, 'tenantId' | 'id' | 'externalId' | 'normalizedNumber'>,
  sequence: number,
  now: Date,
  origin: RequestOrigin = null,
): Item {
  const { tenantId, id: contactId } = contact;
  return {
    ...tombstoneKey(tenantId, contactId),
    ...changeIndexKeys(tenantId, now),
    type: ROW_TYPES.contactTombstone,
    id: contactId,
    tenantId,
    deletedAt: nowIso(now),
    ...(contact.externalId !== null && { externalId: contact.externalId }),
    ...(contact.normalizedNumber !== null && { phoneNumber: contact.normalizedNumber }),
    ...Object.fromEntries(Object.entries(originAttributes(origin)).filter(([, v]) => v !== undefined)),
    [ROW_SEQUENCE]: sequence,
    [CHANGED_AT]: now.getTime(),
    [TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + TOMBSTONE_RETENTION_SECONDS,
  };
}
