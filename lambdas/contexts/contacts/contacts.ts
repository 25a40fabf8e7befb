import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { batchGetItems } from '../../shared/table/batch-get';
import {
  CONDITION,
  isConditionalCheckFailed,
  nowIso,
  transactWrite,
  type Item,
  type TransactItem,
} from '../../shared/table/dynamo';
import { PREFIX, tenantScopedPk, type Key } from '../../shared/table/keys';
import { NamedTransaction, type Refusal } from '../../shared/table/named-transaction';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { queryPage, type Page } from '../../shared/table/paging';
import { ROW_SEQUENCE, rowSequenceOf, withRowSequenceBump } from '../../shared/table/row-sequence';
import { CHANGED_AT } from '../../shared/table/row-types';
import { GSIS } from '../../shared/table/table-schema';
import { updateExpression, type Condition } from '../../shared/table/update-expression';
import { consentAttributes, ledgerSnapshot, type LedgerSnapshot } from '../consent/ledger';
import {
  claimMove,
  claimRelease,
  externalIdMove,
  otherHolder,
  readExternalIdClaim,
  readNumberClaim,
} from './contact-claims';
import { changeIndexKeys, changesPage } from './contact-changes';
import { insertNewContact, insertWithClaims } from './contact-inserts';
import {
  contactKey,
  customFieldsOf,
  externalIdClaimKey,
  externalIdIndexKeys,
  fromItem,
  namedIndexKeys,
  newContact,
  numberClaimKey,
  tombstoneItem,
  withConsentFields,
  type NumberClaim,
} from './contact-rows';
import { searchPage } from './contact-search';
import { ContactConflictError } from './errors';
import { indexedEntriesOf, reindex, SEARCH_INDEX_ATTRIBUTE, type IndexedEntries, type Reindex } from './search-rows';
import type { Contact, CreateContactInput, DeletedContact, ListContactsInput, UpdateContactInput } from './schemas';

/**
 * The directory's reads and writes: a contact, the list, a search, the feed of changes, a contact
 * by external id; create (with adoption), PATCH and delete, each one transaction of the contact's
 * rows and claims (contact-rows.ts, contact-claims.ts) run in optimistic rounds; new contacts are
 * written by contact-inserts.ts, a batch by contact-batch.ts.
 */

/**
 * GET /contacts/{id}: the contact with its number's consent, in one read. Strongly consistent: a contact created by an
 * answered request is found at once (an eventually consistent read may miss the last second's writes).
 */
export async function getContact(tenantId: string, contactId: string): Promise<Contact> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }),
  );
  if (!Item) throw new NotFoundError('Contact');
  return fromItem(Item);
}

type ContactRow = { contact: Contact; indexed: IndexedEntries; row: Item };

/**
 * The stored row and the search entries it is filed under, for writes that change them. Strongly consistent: a PATCH or
 * DELETE right after the create finds the contact, and its write is conditioned on what it read.
 */
async function readContactRow(tenantId: string, contactId: string): Promise<ContactRow> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }),
  );
  if (!Item) throw new NotFoundError('Contact');
  const contact = fromItem(Item);
  return { contact, indexed: indexedEntriesOf(Item, contact), row: Item };
}

/** Removes an attribute in an update (`undefined` leaves it alone, `null` stores null). */
const REMOVE = Symbol('remove');
type Written = Record<string, unknown>;

/**
 * A write of a contact's attributes (those REMOVE marks are removed), its sequence number bumped,
 * `searchIndex` set when its entries change, guarded by `condition`.
 */
function contactWrite(fields: Written, search: Reindex, condition: Condition) {
  const all: Written = { ...fields, [SEARCH_INDEX_ATTRIBUTE]: search.changed ? search.fingerprint : undefined };
  const entries = Object.entries(all).filter(([, v]) => v !== undefined);
  const parts = {
    set: Object.fromEntries(entries.filter(([, v]) => v !== REMOVE)),
    remove: entries.filter(([, v]) => v === REMOVE).map(([k]) => k),
  };
  return updateExpression(withRowSequenceBump(parts), condition);
}

/** The attributes of an external id given to a write: set with its index entry, or removed with it. */
function externalIdAttributes(tenantId: string, externalId: string | null | undefined): Written {
  if (externalId === undefined) return {};
  if (externalId === null)
    return { externalId: REMOVE, [GSIS.externalIds.partitionKey]: REMOVE, [GSIS.externalIds.sortKey]: REMOVE };
  return { externalId, ...externalIdIndexKeys(tenantId, externalId) };
}

const customFieldsAttribute = (customFields: Record<string, string> | null | undefined): Written =>
  customFields === undefined ? {} : { customFields: customFieldsOf(customFields) ?? REMOVE };

/**
 * What every write of a contact's own fields adds: when it happened (the contact.* event's time,
 * CHANGED_AT) and its new place at the end of the feed of changes. The row's sequence number is
 * bumped by the write itself (`withRowSequenceBump`).
 */
const changeStamp = (tenantId: string, now: Date): Written => ({
  updatedAt: nowIso(now),
  [CHANGED_AT]: now.getTime(),
  ...changeIndexKeys(tenantId, now),
});

/** The condition that a row still holds the external id it was read with. */
const externalIdAsRead = (externalId: string | null) =>
  externalId === null
    ? {
        expression: 'attribute_not_exists(#externalIdAsRead)',
        names: { '#externalIdAsRead': 'externalId' },
        values: {},
      }
    : {
        expression: '#externalIdAsRead = :externalIdAsRead',
        names: { '#externalIdAsRead': 'externalId' },
        values: { ':externalIdAsRead': externalId },
      };

/** The parts of an adoption's transaction, by name. */
type AdoptionPart = 'numberClaim' | 'contact' | 'externalIdRelease' | 'externalIdClaim' | 'searchRows';

/**
 * The contact's row for a round; LOST_RACE when it is gone and `goneIsLostRace` (a claim or a match
 * named it, and it was deleted since: the caller decides again rather than answering 404).
 */
async function readRowForRound(
  tenantId: string,
  contactId: string,
  goneIsLostRace: boolean,
): Promise<RoundResult<ContactRow>> {
  try {
    return await readContactRow(tenantId, contactId);
  } catch (err) {
    if (err instanceof NotFoundError && goneIsLostRace) return LOST_RACE;
    throw err;
  }
}

/**
 * Adoption (POST /contacts rule 1): the auto-created row keeps its id and source and becomes
 * named. The claim flips to named in the same transaction, guarded on still being unnamed, so
 * of two concurrent adopters exactly one wins and the other sees a named contact (409). The new
 * name's search entries replace the old ones in that transaction, guarded on the entries read.
 * The external id and custom fields, when given, are set as a PATCH sets them (omitted: kept).
 * LOST_RACE: the row or its claim changed since it was read; the caller decides again.
 */
export async function adoptRound(
  tenantId: string,
  contactId: string,
  input: CreateContactInput,
  now: Date,
): Promise<RoundResult<Contact>> {
  const current = await readRowForRound(tenantId, contactId, true);
  if (current === LOST_RACE) return LOST_RACE;
  const refusal = await adoptionTransaction(tenantId, contactId, input, current, now).write();
  if (refusal) return adoptionRefused(refusal, contactId);
  return readAdopted(tenantId, contactId);
}

/** The fields an adoption writes: the input's, the named indexes, and the external id only when it moves. */
function adoptedAttributes(
  tenantId: string,
  contactId: string,
  input: CreateContactInput,
  externalIdMoves: boolean,
  now: Date,
): Written {
  return {
    displayName: input.displayName,
    phoneNumber: input.phoneNumber,
    company: input.company ?? null,
    tag: input.tag ?? null,
    notes: input.notes ?? null,
    isAutoCreated: false,
    ...namedIndexKeys(tenantId, contactId),
    ...externalIdAttributes(tenantId, externalIdMoves ? input.externalId : undefined),
    ...customFieldsAttribute(input.customFields),
    ...changeStamp(tenantId, now),
  };
}

/**
 * The adoption's one transaction: the claim flipped to named, the row written (still auto-created,
 * still filed and identified as read), the external id's claim moved, the search rows replaced.
 */
function adoptionTransaction(
  tenantId: string,
  contactId: string,
  input: CreateContactInput,
  current: ContactRow,
  now: Date,
): NamedTransaction<AdoptionPart> {
  const externalIdMoves = input.externalId !== undefined && input.externalId !== current.contact.externalId;
  const search = reindex(tenantId, contactId, current.indexed, {
    displayName: input.displayName,
    company: input.company ?? null,
    normalizedNumber: current.contact.normalizedNumber,
  });
  const externalIdWrites = externalIdMoves
    ? externalIdMove(tenantId, contactId, current.contact.externalId, input.externalId ?? null)
    : {};
  const asRead = externalIdAsRead(current.contact.externalId);
  const contactUpdate = contactWrite(adoptedAttributes(tenantId, contactId, input, externalIdMoves, now), search, {
    expression: `${CONDITION.rowExists} AND #wasAutoCreated = :wasAuto AND ${search.guard.expression} AND ${asRead.expression}`,
    names: { '#wasAutoCreated': 'isAutoCreated', ...search.guard.names, ...asRead.names },
    values: { ':wasAuto': true, ...search.guard.values, ...asRead.values },
  });
  return new NamedTransaction<AdoptionPart>()
    .add('numberClaim', {
      Update: {
        TableName: TABLE_NAME,
        Key: numberClaimKey(tenantId, input.phoneNumber),
        UpdateExpression: 'SET named = :true',
        ConditionExpression: 'contactId = :contactId AND named = :false',
        ExpressionAttributeValues: { ':contactId': contactId, ':true': true, ':false': false },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    })
    .add('contact', { Update: { TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ...contactUpdate } })
    .addAll(externalIdWrites)
    .add('searchRows', ...search.writes);
}

/**
 * A refused adoption: 409 when another adopter named the contact first or another contact holds the
 * external id; otherwise the claim moved or the row changed since it was read (renamed, adopted,
 * deleted), and the caller decides again.
 */
function adoptionRefused(refusal: Refusal<AdoptionPart>, contactId: string): typeof LOST_RACE {
  const claim = refusal.failed('numberClaim');
  if (claim?.item?.named === true) throw new ContactConflictError(claim.item.contactId as string);
  const externalIdHolder = otherHolder(refusal.failed('externalIdClaim'), contactId);
  if (externalIdHolder) throw new ContactConflictError(externalIdHolder, 'externalId');
  return LOST_RACE;
}

/**
 * The adopted contact as answered. Strongly consistent, so the answer is the adopted row, not the
 * auto-created one a replica still has. Deleted right after the adoption: the number is free (or
 * someone else's), so the caller decides again rather than answering 404.
 */
async function readAdopted(tenantId: string, contactId: string): Promise<RoundResult<Contact>> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }),
  );
  if (!Item) return LOST_RACE;
  return fromItem(Item);
}

/** Rounds of a create: each round lost means another writer changed a claim in between. */
const CREATE_ROUNDS = { what: 'createContact: the number kept changing hands', rounds: 4 };

/** POST /contacts: create (201), adopt the auto-created row (200), or 409 naming the holder. */
export async function createContact(
  tenantId: string,
  input: CreateContactInput,
  now = new Date(),
): Promise<{ contact: Contact; adopted: boolean }> {
  return optimisticRounds(CREATE_ROUNDS, async () => {
    const inserted = await insertNewContact(tenantId, input, now);
    if (inserted.ok) return { contact: inserted.contact, adopted: false };
    if (inserted.numberHolder) {
      if (inserted.numberHolder.named) throw new ContactConflictError(inserted.numberHolder.contactId);
      const adopted = await adoptRound(tenantId, inserted.numberHolder.contactId, input, now);
      return adopted === LOST_RACE ? LOST_RACE : { contact: adopted, adopted: true };
    }
    throw new ContactConflictError(inserted.externalIdHolder as string, 'externalId');
  });
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
  const claim = await readNumberClaim(tenantId, number);
  if (claim) return claim.contactId;
  // Texts and calls of one new number arriving together all try to create its contact: the one
  // that wins holds the claim, which answers the others (`insertWithClaims`).
  const inserted = await insertWithClaims(
    newContact(tenantId, { displayName: number, phoneNumber: number, source }, now),
  );
  return inserted.ok ? inserted.contact.id : (inserted.numberHolder as NumberClaim).contactId;
}

export type ContactPage = Page<Contact> & { deletedContacts?: DeletedContact[] };

export async function listContacts(tenantId: string, input: ListContactsInput): Promise<ContactPage> {
  if (input.externalId !== undefined) return contactByExternalId(tenantId, input.externalId, input.includeAutoCreated);
  if (input.updatedSince !== undefined) {
    const page = await changesPage(
      tenantId,
      { ...input, updatedSince: input.updatedSince, includeDeleted: input.includeDeleted === true },
      fromItem,
    );
    return {
      items: page.contacts,
      nextCursor: page.nextCursor,
      ...(input.includeDeleted && { deletedContacts: page.deletedContacts }),
    };
  }
  return input.search
    ? searchPage(tenantId, { ...input, search: input.search }, (ids) => readContacts(tenantId, ids))
    : listContactRows(tenantId, input);
}

/**
 * GET /contacts?externalId=: the external id's claim row read by its key, then the contact it names, both strongly
 * consistent, so a contact created by an answered request is found at once (the `externalIds` index may lag a write).
 */
async function contactByExternalId(
  tenantId: string,
  externalId: string,
  includeAutoCreated: boolean,
): Promise<ContactPage> {
  const contactId = await readExternalIdClaim(tenantId, externalId);
  const contact = contactId === undefined ? undefined : await getContact(tenantId, contactId).catch(notFoundAsNone);
  const shown = contact && (includeAutoCreated || !contact.isAutoCreated) && contact.externalId === externalId;
  return { items: shown ? [contact] : [], nextCursor: null };
}

/** A contact deleted between its claim's read and its own: none. */
function notFoundAsNone(err: unknown): undefined {
  if (err instanceof NotFoundError) return undefined;
  throw err;
}

/** Contacts by id, in one BatchGetItem per 100: those deleted meanwhile are missing. */
async function readContacts(tenantId: string, contactIds: readonly string[]): Promise<Contact[]> {
  return (await batchGetItems(contactIds.map((id) => contactKey(tenantId, id)))).map(fromItem);
}

/** The plain list, newest first: every contact on the `directory` index, named ones on gsi1. */
async function listContactRows(tenantId: string, input: ListContactsInput): Promise<Page<Contact>> {
  const index = input.includeAutoCreated ? GSIS.directory : GSIS.gsi1;
  const indexPk = tenantScopedPk(tenantId, input.includeAutoCreated ? PREFIX.contacts : PREFIX.namedContacts);
  const page = await queryPage({
    query: {
      TableName: TABLE_NAME,
      IndexName: index.indexName,
      KeyConditionExpression: '#pk = :pk',
      ScanIndexForward: false,
      ExpressionAttributeNames: { '#pk': index.partitionKey },
      ExpressionAttributeValues: { ':pk': indexPk },
    },
    limit: input.limit,
    // An index's start key holds the row's table key too: both follow from the cursor's id.
    startKey: input.cursor
      ? {
          ...contactKey(tenantId, input.cursor),
          [index.partitionKey]: indexPk,
          [index.sortKey]: `${PREFIX.contact}${input.cursor}`,
        }
      : undefined,
    fromItem: (item) => item,
    idOf: (item) => item.id as string,
  });
  return { ...page, items: page.items.map(fromItem) };
}

const touchesSearch = (patch: UpdateContactInput): boolean =>
  patch.displayName !== undefined || patch.company !== undefined || patch.phoneNumber !== undefined;

const sameCustomFields = (a: Record<string, string> | null, b: Record<string, string> | null): boolean =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());

/** True when the patch gives some field a value the contact does not have (the batch's `unchanged` is its opposite). */
export function patchChanges(current: Contact, patch: UpdateContactInput): boolean {
  return Object.entries(patch).some(([field, value]) => {
    if (value === undefined) return false;
    if (field === 'customFields') return !sameCustomFields(current.customFields, customFieldsOf(value));
    return current[field as keyof Contact] !== value;
  });
}

export type UpdateOptions = {
  /** The batch's match: the contact must still be the one it matched; false decides again (LOST_RACE). */
  expect?: (current: Contact) => boolean;
  /** Write nothing when every given field already has its value (the batch's `unchanged`). */
  skipUnchanged?: boolean;
};

export type Updated = { contact: Contact; changed: boolean };

/** Rounds of a PATCH: each lost round means another writer changed the contact in between. */
const UPDATE_ROUNDS = { what: 'updateContact: the contact kept changing', rounds: 4 };

/** PATCH /contacts/{id}: only the given fields change; a new number or external id moves its claim atomically. */
export async function updateContact(
  tenantId: string,
  contactId: string,
  patch: UpdateContactInput,
  now = new Date(),
): Promise<Contact> {
  return (await optimisticRounds(UPDATE_ROUNDS, () => updateRound(tenantId, contactId, patch, now))).contact;
}

/** Both conditions. */
const andCondition = (a: Condition, b: Condition): Condition => ({
  expression: `${a.expression} AND ${b.expression}`,
  names: { ...a.names, ...b.names },
  values: { ...a.values, ...b.values },
});

/**
 * An update that moves no claim and no search entry: one conditional write of the contact row.
 * LOST_RACE when `condition` no longer holds (deleted, renumbered or re-identified meanwhile).
 */
async function updateInPlace(
  key: Key,
  written: Written,
  search: Reindex,
  condition: Condition,
): Promise<RoundResult<Updated>> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: key,
        ...contactWrite(written, { ...search, changed: false }, condition),
        // The row as this write left it: `next` comes from an older read and would hide a concurrent adoption.
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { contact: fromItem(Attributes as Item), changed: true };
  } catch (err) {
    if (isConditionalCheckFailed(err)) return LOST_RACE;
    throw err;
  }
}

/** The parts of an update's transaction, by name. */
type UpdatePart =
  | 'contact'
  | 'numberRelease'
  | 'numberClaim'
  | 'externalIdRelease'
  | 'externalIdClaim'
  | 'searchRows'
  | 'consentUnchanged';

/** What a round of an update decided to write, from the row it read. */
type UpdatePlan = {
  current: Contact;
  /** The contact as the write leaves it: the round's answer. */
  next: Contact;
  search: Reindex;
  written: Written;
  /** The row still holds the number and the external id read. */
  stillAsRead: Condition;
  /** The new number's consent, copied, with the check that the ledger is unchanged when the write commits. */
  ledger: LedgerSnapshot | undefined;
  numberMoves: boolean;
  externalIdMoves: boolean;
  searchChanges: boolean;
};

/**
 * One round of an update: read the contact, write what the patch changes conditioned on what was
 * read. LOST_RACE when the contact changed in between (or, with `expect`, is gone or no longer the
 * one matched); ContactConflictError when another contact holds the new number or external id.
 */
export async function updateRound(
  tenantId: string,
  contactId: string,
  patch: UpdateContactInput,
  now: Date,
  options: UpdateOptions = {},
): Promise<RoundResult<Updated>> {
  const read = await readRowForRound(tenantId, contactId, Boolean(options.expect));
  if (read === LOST_RACE) return LOST_RACE;
  const current = read.contact;
  if (options.expect && !options.expect(current)) return LOST_RACE;
  if (options.skipUnchanged && !patchChanges(current, patch)) return { contact: current, changed: false };
  const plan = await planUpdate(tenantId, contactId, read, patch, now);
  if (!plan.numberMoves && !plan.searchChanges && !plan.externalIdMoves) {
    // A PATCH of a searched field that leaves the entries as they are still needs them as read:
    // a rename committed since would otherwise keep entries this write no longer matches.
    return updateInPlace(
      contactKey(tenantId, contactId),
      plan.written,
      plan.search,
      touchesSearch(patch) ? andCondition(plan.stillAsRead, plan.search.guard) : plan.stillAsRead,
    );
  }
  return updateWithMoves(tenantId, contactId, plan);
}

/** The contact as the patch leaves it (before a new number's consent is copied onto it). */
function patchedContact(current: Contact, patch: UpdateContactInput, now: Date): Contact {
  const next: Contact = {
    ...current,
    ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    ...(patch.customFields !== undefined && { customFields: customFieldsOf(patch.customFields) }),
    updatedAt: nowIso(now),
  };
  if (patch.phoneNumber !== undefined) next.normalizedNumber = patch.phoneNumber;
  return next;
}

/**
 * What the round writes, decided from the row read; reads the new number's consent ledger when
 * the number moves (a new number brings its own consent: the ledger's row, copied and checked unchanged).
 */
async function planUpdate(
  tenantId: string,
  contactId: string,
  read: ContactRow,
  patch: UpdateContactInput,
  now: Date,
): Promise<UpdatePlan> {
  const { contact: current, indexed } = read;
  const next = patchedContact(current, patch, now);
  const search = reindex(tenantId, contactId, indexed, next);
  const numberMoves = current.normalizedNumber !== next.normalizedNumber;
  const externalIdMoves = current.externalId !== next.externalId;
  const ledger = numberMoves ? await ledgerSnapshot(tenantId, next.normalizedNumber as string) : undefined;
  if (ledger) Object.assign(next, withConsentFields(ledger.consent));
  return {
    current,
    next,
    search,
    written: patchAttributes(tenantId, patch, { next, externalIdMoves, ledger }, now),
    stillAsRead: stillAsReadCondition(current),
    ledger,
    numberMoves,
    externalIdMoves,
    searchChanges: touchesSearch(patch) && search.changed,
  };
}

/**
 * Only the fields this PATCH writes: a value derived from the rest of the row read would
 * overwrite what a concurrent writer (an adoption, another PATCH) just set.
 */
function patchAttributes(
  tenantId: string,
  patch: UpdateContactInput,
  moves: { next: Contact; externalIdMoves: boolean; ledger: LedgerSnapshot | undefined },
  now: Date,
): Written {
  return {
    displayName: patch.displayName,
    phoneNumber: patch.phoneNumber,
    normalizedNumber: patch.phoneNumber,
    company: patch.company,
    tag: patch.tag,
    notes: patch.notes,
    ...externalIdAttributes(tenantId, moves.externalIdMoves ? moves.next.externalId : undefined),
    ...customFieldsAttribute(patch.customFields),
    ...changeStamp(tenantId, now),
    ...(moves.ledger && consentAttributes(moves.ledger.consent)),
  };
}

/** The row exists and still holds the number and the external id it was read with. */
function stillAsReadCondition(current: Contact): Condition {
  const asRead = externalIdAsRead(current.externalId);
  return {
    expression: `${CONDITION.rowExists} AND #currentNumberAttr = :currentNumber AND ${asRead.expression}`,
    names: { '#currentNumberAttr': 'normalizedNumber', ...asRead.names },
    values: { ':currentNumber': current.normalizedNumber, ...asRead.values },
  };
}

/**
 * An update that moves a claim or search entries: the row, the number's and the external id's
 * claims, the search rows and the consent check in one transaction, so they all agree or none is written.
 */
async function updateWithMoves(tenantId: string, contactId: string, plan: UpdatePlan): Promise<RoundResult<Updated>> {
  const { current, next, search, ledger } = plan;
  const claimMoves = plan.numberMoves ? claimMove(tenantId, contactId, current, next.normalizedNumber as string) : {};
  const externalIdWrites = plan.externalIdMoves
    ? externalIdMove(tenantId, contactId, current.externalId, next.externalId)
    : {};
  const refusal = await new NamedTransaction<UpdatePart>()
    .add('contact', movingContactUpdate(tenantId, contactId, plan))
    .addAll(claimMoves)
    .addAll(externalIdWrites)
    .add('searchRows', ...search.writes)
    .add('consentUnchanged', ledger?.unchanged)
    .write();
  // The row as this write left it: its conditions held the number, the named flag and the search
  // fields as read. A read after it could show a later writer's row instead (an adoption that
  // replaced the fields this PATCH just wrote), which is not this PATCH's answer.
  if (!refusal) return { contact: next, changed: true };
  // Held by another contact: 409 naming it. Held by this very contact: a concurrent PATCH moved it
  // there first; the next round sees no move. Otherwise the contact changed under us: decide afresh.
  const numberHolder = otherHolder(refusal.failed('numberClaim'), contactId);
  if (numberHolder) throw new ContactConflictError(numberHolder);
  const externalIdHolder = otherHolder(refusal.failed('externalIdClaim'), contactId);
  if (externalIdHolder) throw new ContactConflictError(externalIdHolder, 'externalId');
  return LOST_RACE;
}

/** The contact row's write in an update that moves claims or search entries. */
function movingContactUpdate(tenantId: string, contactId: string, plan: UpdatePlan): TransactItem {
  const { current, search, stillAsRead } = plan;
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: contactKey(tenantId, contactId),
      // Also still auto-created or named as read: a new claim copies that flag, and an
      // adoption committed since the read must not leave a claim saying "unnamed". And still
      // filed under the search entries read, which this write replaces.
      ...contactWrite(
        plan.written,
        { ...search, changed: plan.searchChanges },
        {
          expression: `${stillAsRead.expression} AND #isAutoCreatedAttr = :wasAuto AND ${search.guard.expression}`,
          names: { ...stillAsRead.names, '#isAutoCreatedAttr': 'isAutoCreated', ...search.guard.names },
          values: { ...stillAsRead.values, ':wasAuto': current.isAutoCreated, ...search.guard.values },
        },
      ),
    },
  };
}

const DELETE_ROUNDS = { what: 'deleteContact: the contact kept changing', rounds: 4 };

/**
 * DELETE /contacts/{id}: the contact, its claims and its search rows go together, so the number
 * and the external id are free again, and its tombstone takes its place in the feed of changes
 * (with the sequence number after the contact's last: the delete is its newest change).
 */
export async function deleteContact(tenantId: string, contactId: string): Promise<void> {
  await optimisticRounds(DELETE_ROUNDS, async () => {
    const { contact: current, indexed, row } = await readContactRow(tenantId, contactId);
    const search = reindex(tenantId, contactId, indexed, { displayName: '', company: null, normalizedNumber: null });
    const sequence = rowSequenceOf(row);
    const reasons = await transactWrite([
      {
        Delete: {
          TableName: TABLE_NAME,
          Key: contactKey(tenantId, contactId),
          // Unchanged since it was read (the sequence moves with every write), so the tombstone's number follows its
          // last.
          ConditionExpression: `${CONDITION.rowExists} AND normalizedNumber = :number AND ${search.guard.expression} AND ${sequence > 0 ? '#sequence = :sequence' : 'attribute_not_exists(#sequence)'}`,
          ExpressionAttributeNames: { ...search.guard.names, '#sequence': ROW_SEQUENCE },
          ExpressionAttributeValues: {
            ':number': current.normalizedNumber,
            ...search.guard.values,
            ...(sequence > 0 && { ':sequence': sequence }),
          },
        },
      },
      ...(current.normalizedNumber
        ? [claimRelease(numberClaimKey(tenantId, current.normalizedNumber), contactId)]
        : []),
      ...(current.externalId !== null
        ? [claimRelease(externalIdClaimKey(tenantId, current.externalId), contactId)]
        : []),
      ...search.writes,
      {
        Put: {
          TableName: TABLE_NAME,
          Item: tombstoneItem(tenantId, contactId, sequence + 1, new Date()),
          ConditionExpression: CONDITION.rowIsNew,
        },
      },
    ]);
    // Cancelled: the contact changed since it was read; read it again.
    return reasons ? LOST_RACE : true;
  });
}
