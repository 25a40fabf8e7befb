import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError, TemporarilyUnavailableError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { batchGetItems } from '../../shared/table/batch-get';
import { CONDITION, failedCondition, isConditionalCheckFailed, nowIso, str, transactWrite, type Item } from '../../shared/table/dynamo';
import { PREFIX, sortKeyStartsWith, tenantPk, tenantScopedPk } from '../../shared/table/keys';
import { queryPage, type Page } from '../../shared/table/paging';
import { isContention } from '../../shared/table/contention';
import { GSIS } from '../../shared/table/table-schema';
import { consentAttributes, ledgerSnapshot, type Consent } from '../consent/ledger';
import { searchPage } from './contact-search';
import { ContactConflictError } from './errors';
import { indexedEntriesOf, insertIndex, reindex, SEARCH_INDEX_ATTRIBUTE, type IndexedEntries, type Reindex } from './search-rows';
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

/**
 * A contact row carries the consent of its number: a copy of the number's ledger row
 * (consent/ledger.ts), written in the same transaction as every ledger change
 * (./consent-copies.ts) and by every write that gives the contact a number (create, renumber:
 * `ledgerSnapshot`'s check keeps the copy the ledger's). The ledger stays the truth: it outlives
 * the contact's delete and renumber. So a contact is one read and a page of contacts one Query.
 */
export function toItem(contact: Contact): Item {
  return {
    ...contactKey(contact.tenantId, contact.id),
    // Sparse index: only named contacts appear in it, so includeAutoCreated=false is a plain query.
    ...(!contact.isAutoCreated && namedIndexKeys(contact.tenantId, contact.id)),
    type: 'contact',
    ...contact,
    [SEARCH_INDEX_ATTRIBUTE]: insertIndex(contact.tenantId, contact.id, contact).fingerprint,
  };
}

const withConsentFields = (consent: Consent): Pick<Contact, 'consentStatus' | 'consentSource' | 'consentAt' | 'consentNote'> =>
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

/** A contact as POST /contacts creates it. */
const manualContact = (tenantId: string, input: CreateContactInput, now: Date): Contact =>
  newContact(
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

/** GET /contacts/{id}: the contact with its number's consent, in one read. */
export async function getContact(tenantId: string, contactId: string): Promise<Contact> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId) }));
  if (!Item) throw new NotFoundError('Contact');
  return fromItem(Item);
}

/** The stored row and the search entries it is filed under, for writes that change them. */
async function readContactRow(tenantId: string, contactId: string, consistent = false): Promise<{ contact: Contact; indexed: IndexedEntries }> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: consistent }));
  if (!Item) throw new NotFoundError('Contact');
  const contact = fromItem(Item);
  return { contact, indexed: indexedEntriesOf(Item, contact) };
}

/** `SET searchIndex` with the other attributes a write sets, when its entries change. */
const withFingerprint = (fields: Record<string, unknown>, search: Reindex) =>
  updateExpression({ ...fields, [SEARCH_INDEX_ATTRIBUTE]: search.changed ? search.fingerprint : undefined });

/** The rows a new contact is stored as: its number's claim, the contact, its search entries. */
function rowsOfNewContact(contact: Contact) {
  return {
    claim: claimItem(contact.tenantId, contact.normalizedNumber as string, { contactId: contact.id, named: !contact.isAutoCreated }),
    row: toItem(contact),
    entries: insertIndex(contact.tenantId, contact.id, contact).writes,
  };
}

/**
 * The rows `createContact` writes for a number nobody holds, for bulk loads (the bench's scale
 * section): the same items, without the transaction's conditions, so a loader can batch them.
 */
export function newContactRows(tenantId: string, input: CreateContactInput, now = new Date()): Item[] {
  const { claim, row, entries } = rowsOfNewContact(manualContact(tenantId, input, now));
  return [claim, row, ...entries.flatMap((write) => (write.Put ? [write.Put.Item as Item] : []))];
}

/**
 * Writes a contact, its claim and its search rows together, the contact with its number's consent
 * copied from the ledger (checked unchanged in the same transaction); on a lost race returns the
 * claim that won. Returns the contact as written.
 */
async function insertWithClaim(draft: Contact): Promise<{ ok: true; contact: Contact } | { ok: false; claim: NumberClaim }> {
  for (let round = 0; round < 4; round += 1) {
    const { consent, unchanged } = await ledgerSnapshot(draft.tenantId, draft.normalizedNumber as string);
    const contact: Contact = { ...draft, ...withConsentFields(consent) };
    const { claim, row, entries } = rowsOfNewContact(contact);
    const reasons = await transactWrite([
      { Put: { TableName: TABLE_NAME, Item: claim, ConditionExpression: CONDITION.rowIsNew, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
      { Put: { TableName: TABLE_NAME, Item: row, ConditionExpression: CONDITION.rowIsNew } },
      unchanged,
      ...entries,
    ]);
    if (!reasons) return { ok: true, contact };
    const claimTaken = failedCondition(reasons, 0);
    if (claimTaken?.item) return { ok: false, claim: { contactId: claimTaken.item.contactId as string, named: claimTaken.item.named === true } };
    // The number's consent changed between the read and the write: copy it again.
    if (!failedCondition(reasons, 2)) throw new Error(`insertWithClaim: contact ${contact.id} was refused (${reasons.map((r) => r.code).join(', ')})`);
  }
  throw new TemporarilyUnavailableError("insertWithClaim: the number's consent kept changing");
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
 * of two concurrent adopters exactly one wins and the other sees a named contact (409). The new
 * name's search entries replace the old ones in that transaction, guarded on the entries read.
 */
async function adopt(tenantId: string, contactId: string, input: CreateContactInput, now: Date): Promise<Contact> {
  const number = input.phoneNumber;
  let current: Awaited<ReturnType<typeof readContactRow>>;
  try {
    current = await readContactRow(tenantId, contactId, true);
  } catch (err) {
    if (err instanceof NotFoundError) throw new ClaimMoved(); // deleted since the claim was read: decide again
    throw err;
  }
  const named = {
    displayName: input.displayName,
    phoneNumber: input.phoneNumber,
    company: input.company ?? null,
    tag: input.tag ?? null,
    notes: input.notes ?? null,
    isAutoCreated: false,
    updatedAt: nowIso(now),
    ...namedIndexKeys(tenantId, contactId),
  };
  const search = reindex(tenantId, contactId, current.indexed, { ...named, normalizedNumber: current.contact.normalizedNumber });
  const contactUpdate = withFingerprint(named, search);
  const reasons = await transactWrite([
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
        ConditionExpression: `${CONDITION.rowExists} AND #isAutoCreated = :wasAuto AND ${search.guard.expression}`,
        ExpressionAttributeNames: { ...contactUpdate.ExpressionAttributeNames, ...search.guard.names },
        ExpressionAttributeValues: { ...contactUpdate.ExpressionAttributeValues, ':wasAuto': true, ...search.guard.values },
      },
    },
    ...search.writes,
  ]);
  if (reasons) {
    const claim = failedCondition(reasons, 0);
    if (claim?.item?.named === true) throw new ContactConflictError(claim.item.contactId as string);
    // The claim moved, or the row changed since it was read (renamed, adopted, deleted): decide again.
    throw new ClaimMoved();
  }
  // Strongly consistent, so the answer is the adopted row, not the auto-created one a replica still has.
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }));
  // Deleted right after the adoption: the number is free (or someone else's), so the caller decides again rather than answering 404.
  if (!Item) throw new ClaimMoved();
  return fromItem(Item);
}

/** POST /contacts: create (201), adopt the auto-created row (200), or 409 naming the holder. */
export async function createContact(tenantId: string, input: CreateContactInput, now = new Date()): Promise<{ contact: Contact; adopted: boolean }> {
  // A few rounds at most: each round lost means another writer changed the claim in between.
  for (let round = 0; round < 4; round += 1) {
    const inserted = await insertWithClaim(manualContact(tenantId, input, now));
    if (inserted.ok) return { contact: inserted.contact, adopted: false };
    if (inserted.claim.named) throw new ContactConflictError(inserted.claim.contactId);
    try {
      return { contact: await adopt(tenantId, inserted.claim.contactId, input, now), adopted: true };
    } catch (err) {
      if (!(err instanceof ClaimMoved)) throw err;
    }
  }
  throw new TemporarilyUnavailableError('createContact: the number kept changing hands');
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
  // Most numbers seen on calls and texts already have their contact: one read, not a transaction.
  // Strongly consistent: an eventually consistent one could still see the claim of a contact just
  // deleted, and the call or text would name a contact that no longer exists.
  const { Item: claim } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }));
  if (typeof claim?.contactId === 'string') return claim.contactId;
  try {
    const inserted = await insertWithClaim(newContact(tenantId, { displayName: number, phoneNumber: number, source }, now));
    return inserted.ok ? inserted.contact.id : inserted.claim.contactId;
  } catch (err) {
    // Texts and calls of one new number arriving together all try to create its contact: the
    // one that wins holds the claim while the others collide with it. Once it has, the claim
    // answers every one of them; only when nobody holds it yet is the contention theirs.
    if (!isContention(err)) throw err;
    const { Item: winner } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConsistentRead: true }));
    if (typeof winner?.contactId === 'string') return winner.contactId;
    throw err;
  }
}

export async function listContacts(tenantId: string, input: ListContactsInput): Promise<Page<Contact>> {
  return input.search
    ? searchPage(tenantId, { ...input, search: input.search }, (ids) => readContacts(tenantId, ids))
    : listContactRows(tenantId, input);
}

/** Contacts by id, in one BatchGetItem per 100: those deleted meanwhile are missing. */
async function readContacts(tenantId: string, contactIds: readonly string[]): Promise<Contact[]> {
  return (await batchGetItems(contactIds.map((id) => contactKey(tenantId, id)))).map(fromItem);
}

async function listContactRows(tenantId: string, input: ListContactsInput): Promise<Page<Contact>> {
  const named = !input.includeAutoCreated;
  const pk = tenantPk(tenantId);
  const namedPk = tenantScopedPk(tenantId, PREFIX.namedContacts);
  const cursorSk = input.cursor ? `${PREFIX.contact}${input.cursor}` : undefined;
  // Every contact, auto-created ones included, shares the organization's partition with its other rows.
  const contactRows = sortKeyStartsWith(PREFIX.contact);
  const page = await queryPage({
    query: {
      TableName: TABLE_NAME,
      ...(named && { IndexName: GSIS.gsi1.indexName }),
      KeyConditionExpression: named ? '#pk = :pk' : `#pk = :pk AND ${contactRows.condition}`,
      ScanIndexForward: false,
      ExpressionAttributeNames: { '#pk': named ? GSIS.gsi1.partitionKey : 'pk', ...(!named && contactRows.names) },
      ExpressionAttributeValues: { ':pk': named ? namedPk : pk, ...(!named && contactRows.values) },
    },
    limit: input.limit,
    startKey: !cursorSk
      ? undefined
      : (named
        ? { pk, sk: cursorSk, [GSIS.gsi1.partitionKey]: namedPk, [GSIS.gsi1.sortKey]: cursorSk }
        : { pk, sk: cursorSk }),
    fromItem: (item) => item,
    idOf: (item) => item.id as string,
  });
  return { ...page, items: page.items.map(fromItem) };
}

/** PATCH /contacts/{id}: only the given fields change; a new number moves the claim atomically. */
export async function updateContact(tenantId: string, contactId: string, patch: UpdateContactInput, now = new Date()): Promise<Contact> {
  return applyUpdate(tenantId, contactId, patch, now);
}

const touchesSearch = (patch: UpdateContactInput): boolean =>
  patch.displayName !== undefined || patch.company !== undefined || patch.phoneNumber !== undefined;

async function applyUpdate(tenantId: string, contactId: string, patch: UpdateContactInput, now: Date): Promise<Contact> {
  for (let round = 0; round < 4; round += 1) {
    const { contact: current, indexed } = await readContactRow(tenantId, contactId);
    const next: Contact = {
      ...current,
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      updatedAt: nowIso(now),
    };
    if (patch.phoneNumber !== undefined) next.normalizedNumber = patch.phoneNumber;
    const search = reindex(tenantId, contactId, indexed, next);
    const searchChanges = touchesSearch(patch) && search.changed;
    // Only the fields this PATCH writes: a value derived from the rest of `current` would
    // overwrite what a concurrent writer (an adoption, another PATCH) just set.
    const numberMoves = current.normalizedNumber !== next.normalizedNumber;
    // A new number brings its own consent: the ledger's row, copied and checked unchanged.
    const ledger = numberMoves ? await ledgerSnapshot(tenantId, next.normalizedNumber as string) : undefined;
    if (ledger) Object.assign(next, withConsentFields(ledger.consent));
    const changed = withFingerprint(
      { ...patch, normalizedNumber: patch.phoneNumber, updatedAt: next.updatedAt, ...(ledger && consentAttributes(ledger.consent)) },
      { ...search, changed: searchChanges },
    );
    if (!numberMoves && !searchChanges) {
      try {
        const { Attributes } = await dynamo.send(
          new UpdateCommand({
            TableName: TABLE_NAME,
            Key: contactKey(tenantId, contactId),
            ...changed,
            // A PATCH of a searched field that leaves the entries as they are still needs them as read:
            // a rename committed since would otherwise keep entries this write no longer matches.
            ConditionExpression: `${CONDITION.rowExists} AND #normalizedNumber = :currentNumber${touchesSearch(patch) ? ` AND ${search.guard.expression}` : ''}`,
            ExpressionAttributeNames: { ...changed.ExpressionAttributeNames, '#normalizedNumber': 'normalizedNumber', ...(touchesSearch(patch) && search.guard.names) },
            ExpressionAttributeValues: { ...changed.ExpressionAttributeValues, ':currentNumber': current.normalizedNumber, ...(touchesSearch(patch) && search.guard.values) },
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
    const contactUpdate = {
      Update: {
        TableName: TABLE_NAME,
        Key: contactKey(tenantId, contactId),
        ...changed,
        // Also still auto-created or named as read: a new claim copies that flag, and an
        // adoption committed since the read must not leave a claim saying "unnamed". And still
        // filed under the search entries read, which this write replaces.
        ConditionExpression: `${CONDITION.rowExists} AND #currentNumberAttr = :currentNumber AND #isAutoCreatedAttr = :wasAuto AND ${search.guard.expression}`,
        ExpressionAttributeNames: { ...changed.ExpressionAttributeNames, '#currentNumberAttr': 'normalizedNumber', '#isAutoCreatedAttr': 'isAutoCreated', ...search.guard.names },
        ExpressionAttributeValues: { ...changed.ExpressionAttributeValues, ':currentNumber': current.normalizedNumber, ':wasAuto': current.isAutoCreated, ...search.guard.values },
      },
    };
    const claimMoves = numberMoves ? claimMove(tenantId, contactId, current, next.normalizedNumber as string) : [];
    const reasons = await transactWrite([contactUpdate, ...claimMoves, ...search.writes, ...(ledger ? [ledger.unchanged] : [])]);
    // The row as this write left it: its conditions held the number, the named flag and the search
    // fields as read. A read after it could show a later writer's row instead (an adoption that
    // replaced the fields this PATCH just wrote), which is not this PATCH's answer.
    if (!reasons) return next;
    const taken = numberMoves ? failedCondition(reasons, claimMoves.length) : undefined;
    // Held by this very contact: a concurrent PATCH moved it there first; the next round sees no move.
    if (taken?.item && taken.item.contactId !== contactId) throw new ContactConflictError(taken.item.contactId as string);
    // Otherwise the contact changed under us: read it again and decide afresh.
  }
  throw new TemporarilyUnavailableError('updateContact: the contact kept changing');
}

/** Frees a number's claim, if the contact has a number and the claim still names it. */
const claimRelease = (tenantId: string, contactId: string, number: string | null) =>
  number
    ? [{ Delete: { TableName: TABLE_NAME, Key: numberClaimKey(tenantId, number), ConditionExpression: 'contactId = :contactId', ExpressionAttributeValues: { ':contactId': contactId } } }]
    : [];

/** A renumber's claim writes: free the old number (if it still names this contact), take the new one. */
function claimMove(tenantId: string, contactId: string, current: Contact, newNumber: string) {
  return [
    ...claimRelease(tenantId, contactId, current.normalizedNumber),
    {
      Put: {
        TableName: TABLE_NAME,
        Item: claimItem(tenantId, newNumber, { contactId, named: !current.isAutoCreated }),
        ConditionExpression: CONDITION.rowIsNew,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    },
  ];
}

/** DELETE /contacts/{id}: the contact, its claim and its search rows go together, so the number is free again. */
export async function deleteContact(tenantId: string, contactId: string): Promise<void> {
  for (let round = 0; round < 4; round += 1) {
    const { contact: current, indexed } = await readContactRow(tenantId, contactId);
    const search = reindex(tenantId, contactId, indexed, { displayName: '', company: null, normalizedNumber: null });
    const reasons = await transactWrite([
      {
        Delete: {
          TableName: TABLE_NAME,
          Key: contactKey(tenantId, contactId),
          ConditionExpression: `${CONDITION.rowExists} AND normalizedNumber = :number AND ${search.guard.expression}`,
          ExpressionAttributeNames: search.guard.names,
          ExpressionAttributeValues: { ':number': current.normalizedNumber, ...search.guard.values },
        },
      },
      ...claimRelease(tenantId, contactId, current.normalizedNumber),
      ...search.writes,
    ]);
    // Cancelled: the contact changed since it was read; read it again.
    if (!reasons) return;
  }
  throw new TemporarilyUnavailableError('deleteContact: the contact kept changing');
}
