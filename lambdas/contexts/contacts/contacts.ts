import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { digitsOf } from '../../shared/phone';
import { cancellationReasons, CONDITION, failedCondition, isConditionalCheckFailed, nowIso, retryOnTransactionConflict, str, type Item } from '../../shared/table/dynamo';
import { PREFIX, tenantPk, tenantScopedPk } from '../../shared/table/keys';
import { queryPage, type Page } from '../../shared/table/paging';
import { GSIS } from '../../shared/table/table-schema';
import { consentsOf, NO_CONSENT_RECORDED, type Consent } from '../consent/ledger';
import { ContactConflictError } from './errors';
import type { Contact, CreateContactInput, ListContactsInput, UpdateContactInput } from './schemas';

/**
 * Contacts and their number claims. A claim row (`NUMBER#<e164>` -> contactId) is written in the
 * same transaction as every change of a contact's number, so an organization never has two
 * contacts for one number, whatever runs concurrently.
 */
export const contactKey = (tenantId: string, contactId: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.contact}${contactId}`,
});

export const numberClaimKey = (tenantId: string, number: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.numberClaim}${number}`,
});

type NumberClaim = { contactId: string; named: boolean };

const claimItem = (tenantId: string, number: string, claim: NumberClaim): Item => ({
  ...numberClaimKey(tenantId, number),
  type: 'numberClaim',
  ...claim,
});

const namedIndexKeys = (tenantId: string, contactId: string) => ({
  [GSIS.gsi1.partitionKey]: tenantScopedPk(tenantId, PREFIX.namedContacts),
  [GSIS.gsi1.sortKey]: `${PREFIX.contact}${contactId}`,
});

/** Lower-cased copies for case-insensitive `contains` filters (DynamoDB compares bytes). */
const searchAttributes = (contact: Pick<Contact, 'displayName' | 'company' | 'normalizedNumber'>) => ({
  searchName: contact.displayName.toLowerCase(),
  searchCompany: (contact.company ?? '').toLowerCase(),
  searchDigits: digitsOf(contact.normalizedNumber ?? ''),
});

export function toItem(contact: Contact): Item {
  // Consent is not the contact's: it is read from the number's ledger row (withConsent).
  const { consentStatus: _status, consentSource: _source, consentAt: _at, consentNote: _note, ...fields } = contact;
  return {
    ...contactKey(contact.tenantId, contact.id),
    // Sparse index: only named contacts appear in it, so includeAutoCreated=false is a plain query.
    ...(!contact.isAutoCreated && namedIndexKeys(contact.tenantId, contact.id)),
    type: 'contact',
    ...fields,
    ...searchAttributes(contact),
  };
}

/**
 * Contacts as the API shows them: each with the consent of its current number, from the consent
 * ledger (one BatchGetItem per page), so deleting, renumbering or re-creating a contact can never
 * change what a number decided.
 */
async function withConsent(tenantId: string, contacts: Contact[]): Promise<Contact[]> {
  const numbers = contacts.map((c) => c.normalizedNumber).filter((n): n is string => n !== null);
  const consents = numbers.length > 0 ? await consentsOf(tenantId, numbers) : new Map<string, Consent>();
  return contacts.map((contact) => {
    const consent = (contact.normalizedNumber && consents.get(contact.normalizedNumber)) || NO_CONSENT_RECORDED;
    return { ...contact, consentStatus: consent.status, consentSource: consent.source, consentAt: consent.at, consentNote: consent.note };
  });
}

const withConsentOne = async (tenantId: string, contact: Contact): Promise<Contact> => (await withConsent(tenantId, [contact]))[0];

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
    consentStatus: (item.consentStatus as Contact['consentStatus']) ?? 'unknown',
    consentSource: str(item.consentSource),
    consentAt: str(item.consentAt),
    consentNote: str(item.consentNote),
  };
}

function newContact(tenantId: string, fields: Partial<Contact> & Pick<Contact, 'displayName' | 'phoneNumber' | 'source'>, now: Date): Contact {
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
    ...fields,
  };
}

/** GET /contacts/{id}: the contact with its number's consent. */
export async function getContact(tenantId: string, contactId: string): Promise<Contact> {
  return withConsentOne(tenantId, await readContact(tenantId, contactId));
}

/** The stored row alone, for read-then-write rounds that never show consent. */
async function readContact(tenantId: string, contactId: string): Promise<Contact> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId) }));
  if (!Item) throw new NotFoundError('Contact');
  return fromItem(Item);
}

/** Writes a contact and its claim together; on a lost race returns the claim that won. */
async function insertWithClaim(contact: Contact): Promise<{ ok: true } | { ok: false; claim: NumberClaim }> {
  const number = contact.normalizedNumber as string;
  try {
    await retryOnTransactionConflict(() => dynamo.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: TABLE_NAME,
              Item: claimItem(contact.tenantId, number, { contactId: contact.id, named: !contact.isAutoCreated }),
              ConditionExpression: CONDITION.rowIsNew,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Put: { TableName: TABLE_NAME, Item: toItem(contact), ConditionExpression: CONDITION.rowIsNew } },
        ],
      }),
    ));
    return { ok: true };
  } catch (err) {
    const claimTaken = failedCondition(cancellationReasons(err), 0);
    if (!claimTaken?.item) throw err;
    return { ok: false, claim: { contactId: claimTaken.item.contactId as string, named: claimTaken.item.named === true } };
  }
}

/** Attributes set by a person naming a contact, as an update expression. */
function updateExpression(fields: Record<string, unknown>) {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  return {
    UpdateExpression: `SET ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(entries.map(([k]) => [`#${k}`, k])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])),
  };
}

class ClaimMoved extends Error {}

/**
 * Adoption (POST /contacts rule 1): the auto-created row keeps its id and source and becomes
 * named. The claim flips to named in the same transaction, guarded on still being unnamed, so
 * of two concurrent adopters exactly one wins and the other sees a named contact (409).
 */
async function adopt(tenantId: string, contactId: string, input: CreateContactInput, now: Date): Promise<Contact> {
  const number = input.phoneNumber;
  const named = {
    displayName: input.displayName,
    phoneNumber: input.phoneNumber,
    company: input.company ?? null,
    tag: input.tag ?? null,
    notes: input.notes ?? null,
    isAutoCreated: false,
    updatedAt: nowIso(now),
    searchName: input.displayName.toLowerCase(),
    searchCompany: (input.company ?? '').toLowerCase(),
    ...namedIndexKeys(tenantId, contactId),
  };
  const contactUpdate = updateExpression(named);
  try {
    await retryOnTransactionConflict(() => dynamo.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: TABLE_NAME,
              Key: numberClaimKey(tenantId, number),
              UpdateExpression: 'SET named = :true',
              ConditionExpression: 'contactId = :contactId AND named = :false',
              ExpressionAttributeValues: { ':contactId': contactId, ':true': true, ':false': false },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Update: {
              TableName: TABLE_NAME,
              Key: contactKey(tenantId, contactId),
              ...contactUpdate,
              ConditionExpression: `${CONDITION.rowExists} AND #isAutoCreated = :wasAuto`,
              ExpressionAttributeValues: { ...contactUpdate.ExpressionAttributeValues, ':wasAuto': true },
            },
          },
        ],
      }),
    ));
  } catch (err) {
    const claim = failedCondition(cancellationReasons(err), 0);
    if (claim?.item?.named === true) throw new ContactConflictError(claim.item.contactId as string);
    if (claim) throw new ClaimMoved();
    throw err;
  }
  // Strongly consistent, so the answer is the adopted row, not the auto-created one a replica still has.
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }));
  // Deleted right after the adoption: the number is free (or someone else's), so the caller decides again rather than answering 404.
  if (!Item) throw new ClaimMoved();
  return fromItem(Item);
}

/** POST /contacts: create (201), adopt the auto-created row (200), or 409 naming the holder. */
export async function createContact(tenantId: string, input: CreateContactInput, now = new Date()): Promise<{ contact: Contact; adopted: boolean }> {
  const { contact, adopted } = await createOrAdopt(tenantId, input, now);
  return { contact: await withConsentOne(tenantId, contact), adopted };
}

async function createOrAdopt(
  tenantId: string,
  input: CreateContactInput,
  now = new Date(),
): Promise<{ contact: Contact; adopted: boolean }> {
  // A few rounds at most: each round lost means another writer changed the claim in between.
  for (let round = 0; round < 4; round += 1) {
    const contact = newContact(
      tenantId,
      {
        displayName: input.displayName,
        phoneNumber: input.phoneNumber,
        company: input.company ?? null,
        tag: input.tag ?? null,
        notes: input.notes ?? null,
        source: 'manual',
      },
      now,
    );
    const inserted = await insertWithClaim(contact);
    if (inserted.ok) return { contact, adopted: false };
    if (inserted.claim.named) throw new ContactConflictError(inserted.claim.contactId);
    try {
      return { contact: await adopt(tenantId, inserted.claim.contactId, input, now), adopted: true };
    } catch (err) {
      if (!(err instanceof ClaimMoved)) throw err;
    }
  }
  throw new Error('createContact: the number kept changing hands; giving up');
}

/**
 * The contact for a number seen on a call or a text, created as auto when there is none.
 * Returns the id of whichever contact holds the number.
 */
export async function ensureContactForNumber(
  tenantId: string,
  number: string,
  source: 'auto_inbound' | 'auto_outbound',
  now = new Date(),
): Promise<string> {
  const contact = newContact(tenantId, { displayName: number, phoneNumber: number, source }, now);
  const inserted = await insertWithClaim(contact);
  return inserted.ok ? contact.id : inserted.claim.contactId;
}

export async function listContacts(tenantId: string, input: ListContactsInput): Promise<Page<Contact>> {
  const page = await listContactRows(tenantId, input);
  return { ...page, items: await withConsent(tenantId, page.items) };
}

async function listContactRows(tenantId: string, input: ListContactsInput): Promise<Page<Contact>> {
  const named = !input.includeAutoCreated;
  const pk = tenantPk(tenantId);
  const namedPk = tenantScopedPk(tenantId, PREFIX.namedContacts);
  const cursorSk = input.cursor ? `${PREFIX.contact}${input.cursor}` : undefined;
  const filter = input.search ? searchFilter(input.search) : undefined;
  return queryPage({
    query: {
      TableName: TABLE_NAME,
      ...(named && { IndexName: GSIS.gsi1.indexName }),
      KeyConditionExpression: named ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)',
      ScanIndexForward: false,
      FilterExpression: filter?.expression,
      ExpressionAttributeNames: {
        '#pk': named ? GSIS.gsi1.partitionKey : 'pk',
        ...(!named && { '#sk': 'sk' }),
        ...filter?.names,
      },
      ExpressionAttributeValues: { ':pk': named ? namedPk : pk, ...(!named && { ':prefix': PREFIX.contact }), ...filter?.values },
    },
    limit: input.limit,
    startKey: !cursorSk
      ? undefined
      : (named
        ? { pk, sk: cursorSk, [GSIS.gsi1.partitionKey]: namedPk, [GSIS.gsi1.sortKey]: cursorSk }
        : { pk, sk: cursorSk }),
    fromItem,
    idOf: (contact) => contact.id,
  });
}

/** Case-insensitive substring of name or company; a query made of phone characters also matches the number's digits. */
function searchFilter(search: string) {
  const text = search.toLowerCase();
  const digits = digitsOf(search);
  const looksLikeNumber = /^[\d\s+().-]+$/.test(search) && digits.length > 0;
  return {
    expression: `contains(#searchName, :q) OR contains(#searchCompany, :q)${looksLikeNumber ? ' OR contains(#searchDigits, :digits)' : ''}`,
    names: {
      '#searchName': 'searchName',
      '#searchCompany': 'searchCompany',
      ...(looksLikeNumber && { '#searchDigits': 'searchDigits' }),
    },
    values: { ':q': text, ...(looksLikeNumber && { ':digits': digits }) },
  };
}

/** PATCH /contacts/{id}: only the given fields change; a new number moves the claim atomically. */
export async function updateContact(tenantId: string, contactId: string, patch: UpdateContactInput, now = new Date()): Promise<Contact> {
  return withConsentOne(tenantId, await applyUpdate(tenantId, contactId, patch, now));
}

async function applyUpdate(tenantId: string, contactId: string, patch: UpdateContactInput, now: Date): Promise<Contact> {
  for (let round = 0; round < 4; round += 1) {
    const current = await readContact(tenantId, contactId);
    const next: Contact = {
      ...current,
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      updatedAt: nowIso(now),
    };
    if (patch.phoneNumber !== undefined) next.normalizedNumber = patch.phoneNumber;
    // Only the search copies of fields this PATCH writes: a copy derived from the rest of `current`
    // would overwrite what a concurrent writer (an adoption, another PATCH) just set.
    const search = searchAttributes(next);
    const changed = updateExpression({
      ...patch,
      normalizedNumber: patch.phoneNumber,
      updatedAt: next.updatedAt,
      searchName: patch.displayName === undefined ? undefined : search.searchName,
      searchCompany: patch.company === undefined ? undefined : search.searchCompany,
      searchDigits: patch.phoneNumber === undefined ? undefined : search.searchDigits,
    });
    const numberMoves = current.normalizedNumber !== next.normalizedNumber;
    if (!numberMoves) {
      try {
        const { Attributes } = await dynamo.send(
          new UpdateCommand({
            TableName: TABLE_NAME,
            Key: contactKey(tenantId, contactId),
            ...changed,
            ConditionExpression: `${CONDITION.rowExists} AND #normalizedNumber = :currentNumber`,
            ExpressionAttributeNames: { ...changed.ExpressionAttributeNames, '#normalizedNumber': 'normalizedNumber' },
            ExpressionAttributeValues: { ...changed.ExpressionAttributeValues, ':currentNumber': current.normalizedNumber },
            // The row as this write left it: `next` comes from an older read and would hide a concurrent adoption.
            ReturnValues: 'ALL_NEW',
          }),
        );
        return fromItem(Attributes as Item);
      } catch (err) {
        if (isConditionalCheckFailed(err)) continue; // deleted or renumbered meanwhile: look again
        throw err;
      }
    }
    const newNumber = next.normalizedNumber as string;
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: TABLE_NAME,
                Key: contactKey(tenantId, contactId),
                ...changed,
                // Also still auto-created or named as read: the new claim copies that flag, and an
                // adoption committed since the read must not leave a claim saying "unnamed".
                ConditionExpression: `${CONDITION.rowExists} AND #currentNumberAttr = :currentNumber AND #isAutoCreatedAttr = :wasAuto`,
                ExpressionAttributeNames: { ...changed.ExpressionAttributeNames, '#currentNumberAttr': 'normalizedNumber', '#isAutoCreatedAttr': 'isAutoCreated' },
                ExpressionAttributeValues: { ...changed.ExpressionAttributeValues, ':currentNumber': current.normalizedNumber, ':wasAuto': current.isAutoCreated },
              },
            },
            ...(current.normalizedNumber
              ? [
                  {
                    Delete: {
                      TableName: TABLE_NAME,
                      Key: numberClaimKey(tenantId, current.normalizedNumber),
                      ConditionExpression: 'contactId = :contactId',
                      ExpressionAttributeValues: { ':contactId': contactId },
                    },
                  },
                ]
              : []),
            {
              Put: {
                TableName: TABLE_NAME,
                Item: claimItem(tenantId, newNumber, { contactId, named: !current.isAutoCreated }),
                ConditionExpression: CONDITION.rowIsNew,
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      );
      return next;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const claimIndex = reasons.length - 1;
      const taken = failedCondition(reasons, claimIndex);
      // Held by this very contact: a concurrent PATCH moved it there first; the next round sees no move.
      if (taken?.item && taken.item.contactId !== contactId) throw new ContactConflictError(taken.item.contactId as string);
      // Otherwise the contact changed under us: read it again and decide afresh.
    }
  }
  throw new Error('updateContact: the contact kept changing; giving up');
}

/** DELETE /contacts/{id}: the contact and its claim go together, so the number is free again. */
export async function deleteContact(tenantId: string, contactId: string): Promise<void> {
  for (let round = 0; round < 4; round += 1) {
    const current = await readContact(tenantId, contactId);
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: TABLE_NAME,
                Key: contactKey(tenantId, contactId),
                ConditionExpression: `${CONDITION.rowExists} AND normalizedNumber = :number`,
                ExpressionAttributeValues: { ':number': current.normalizedNumber },
              },
            },
            ...(current.normalizedNumber
              ? [
                  {
                    Delete: {
                      TableName: TABLE_NAME,
                      Key: numberClaimKey(tenantId, current.normalizedNumber),
                      ConditionExpression: 'contactId = :contactId',
                      ExpressionAttributeValues: { ':contactId': contactId },
                    },
                  },
                ]
              : []),
          ],
        }),
      );
      return;
    } catch (err) {
      if (!cancellationReasons(err)) throw err;
    }
  }
  throw new Error('deleteContact: the contact kept changing; giving up');
}
