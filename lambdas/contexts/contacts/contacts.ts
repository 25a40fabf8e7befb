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
import { NamedTransaction } from '../../shared/table/named-transaction';
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
  numberClaimOf,
  readNumberClaim,
} from './contact-claims';
import { changeIndexKeys, changesPage } from './contact-changes';
import { insertNewContact, insertWithClaims } from './contact-inserts';
import {
  contactKey,
  externalIdClaimKey,
  externalIdIndexKeys,
  fromItem,
  namedIndexKeys,
  newContact,
  numberClaimKey,
  originAttributes,
  tombstoneItem,
  withConsentFields,
  type NumberClaim,
  type RequestOrigin,
} from './contact-rows';
import { customFieldsWrite, type CustomFieldsWrite } from './custom-field-writes';
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
 * `searchIndex` set when its entries change, its custom fields merged key by key, guarded by
 * `condition` (and by what the custom fields' write needs).
 */
function contactWrite(fields: Written, search: Reindex, condition: Condition, custom: CustomFieldsWrite = NO_FIELDS) {
  const all: Written = { ...fields, [SEARCH_INDEX_ATTRIBUTE]: search.changed ? search.fingerprint : undefined };
  const entries = Object.entries(all).filter(([, v]) => v !== undefined);
  const parts = {
    ...custom.parts,
    set: { ...Object.fromEntries(entries.filter(([, v]) => v !== REMOVE)), ...custom.parts.set },
    remove: [...entries.filter(([, v]) => v === REMOVE).map(([k]) => k), ...(custom.parts.remove ?? [])],
  };
  return updateExpression(
    withRowSequenceBump(parts),
    custom.condition ? andCondition(condition, custom.condition) : condition,
  );
}

const NO_FIELDS: CustomFieldsWrite = { parts: {}, merged: null };

/** The attributes of an external id given to a write: set with its index entry, or removed with it. */
function externalIdAttributes(tenantId: string, externalId: string | null | undefined): Written {
  if (externalId === undefined) return {};
  if (externalId === null)
    return { externalId: REMOVE, [GSIS.externalIds.partitionKey]: REMOVE, [GSIS.externalIds.sortKey]: REMOVE };
  return { externalId, ...externalIdIndexKeys(tenantId, externalId) };
}

/**
 * What every write of a contact's own fields adds: when it happened (the contact.* event's time,
 * CHANGED_AT), its new place at the end of the feed of changes, and the request it comes from (removed
 * when none: the row names its latest change's). The row's sequence number is bumped by the write
 * itself (`withRowSequenceBump`).
 */
const changeStamp = (tenantId: string, now: Date, origin: RequestOrigin): Written => ({
  updatedAt: nowIso(now),
  [CHANGED_AT]: now.getTime(),
  ...changeIndexKeys(tenantId, now),
  ...Object.fromEntries(Object.entries(originAttributes(origin)).map(([k, v]) => [k, v ?? REMOVE])),
});

/**
 * The time of a write of a contact read with `updatedAt`: the clock, but always after what was read, so
 * `updatedAt` only grows and every write of the contact's fields has a CHANGED_AT of its own. Writes are
 * guarded on it (`notAfter`): one that a later stamp overtook meanwhile takes a new time.
 */
const stampAfter = (clock: Date, updatedAt: string): Date =>
  new Date(Math.max(clock.getTime(), Date.parse(updatedAt) + 1));

/** The condition that the row's `updatedAt` is still before `stamp`. */
const updatedBefore = (stamp: Date): Condition => ({
  expression: '#updatedAtBefore < :updatedAtBefore',
  names: { '#updatedAtBefore': 'updatedAt' },
  values: { ':updatedAtBefore': nowIso(stamp) },
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
  origin: RequestOrigin = null,
): Promise<RoundResult<Contact>> {
  let current: ContactRow;
  try {
    current = await readContactRow(tenantId, contactId);
  } catch (err) {
    if (err instanceof NotFoundError) return LOST_RACE; // deleted since the claim was read: decide again
    throw err;
  }
  const refusal = await adoptionTransaction(
    tenantId,
    current,
    input,
    stampAfter(now, current.contact.updatedAt),
    origin,
  ).write();
  if (refusal) {
    const claim = refusal.failed('numberClaim');
    if (claim?.item?.named === true) throw new ContactConflictError(claim.item.contactId as string);
    const externalIdHolder = otherHolder(refusal.failed('externalIdClaim'), contactId);
    if (externalIdHolder) throw new ContactConflictError(externalIdHolder, 'externalId');
    // The claim moved, or the row changed since it was read (renamed, adopted, deleted): decide again.
    return LOST_RACE;
  }
  // Strongly consistent, so the answer is the adopted row, not the auto-created one a replica still has.
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: contactKey(tenantId, contactId), ConsistentRead: true }),
  );
  // Deleted right after the adoption: the number is free (or someone else's), so the caller decides again rather than
  // answering 404.
  if (!Item) return LOST_RACE;
  return fromItem(Item);
}

/** An adoption's transaction: the claim flipped to named, the row named, its external id's claims, its search rows. */
function adoptionTransaction(
  tenantId: string,
  current: ContactRow,
  input: CreateContactInput,
  stamp: Date,
  origin: RequestOrigin,
): NamedTransaction<AdoptionPart> {
  const contactId = current.contact.id;
  const externalIdMoves = input.externalId !== undefined && input.externalId !== current.contact.externalId;
  const named: Written = {
    displayName: input.displayName,
    phoneNumber: input.phoneNumber,
    company: input.company ?? null,
    tag: input.tag ?? null,
    notes: input.notes ?? null,
    isAutoCreated: false,
    ...namedIndexKeys(tenantId, contactId),
    ...externalIdAttributes(tenantId, externalIdMoves ? input.externalId : undefined),
    ...changeStamp(tenantId, stamp, origin),
  };
  const search = reindex(tenantId, contactId, current.indexed, {
    displayName: input.displayName,
    company: input.company ?? null,
    normalizedNumber: current.contact.normalizedNumber,
  });
  const externalIdWrites = externalIdMoves
    ? externalIdMove(tenantId, contactId, current.contact.externalId, input.externalId ?? null)
    : {};
  const asRead = andCondition(externalIdAsRead(current.contact.externalId), updatedBefore(stamp));
  const contactUpdate = contactWrite(
    named,
    search,
    {
      expression: `${CONDITION.rowExists} AND #wasAutoCreated = :wasAuto AND ${search.guard.expression} AND ${asRead.expression}`,
      names: { '#wasAutoCreated': 'isAutoCreated', ...search.guard.names, ...asRead.names },
      values: { ':wasAuto': true, ...search.guard.values, ...asRead.values },
    },
    customFieldsWrite(current.row, input.customFields),
  );
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

/** Rounds of a create: each round lost means another writer changed a claim in between. */
const CREATE_ROUNDS = { what: 'createContact: the number kept changing hands', rounds: 4, site: 'contacts.create' };

/** POST /contacts: create (201), adopt the auto-created row (200), or 409 naming the holder. */
export async function createContact(
  tenantId: string,
  input: CreateContactInput,
  now = new Date(),
  origin: RequestOrigin = null,
): Promise<{ contact: Contact; adopted: boolean }> {
  return optimisticRounds(CREATE_ROUNDS, async () => {
    const inserted = await insertNewContact(tenantId, input, now, origin);
    if (inserted.ok) return { contact: inserted.contact, adopted: false };
    if (inserted.numberHolder) {
      if (inserted.numberHolder.named) throw new ContactConflictError(inserted.numberHolder.contactId);
      const adopted = await adoptRound(tenantId, inserted.numberHolder.contactId, input, now, origin);
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
  /** The number's claim row as the caller read it, strongly consistent, with its own rows (`numberClaimKey`). */
  claimRead?: { row: Item | undefined },
): Promise<string> {
  // Most numbers seen on calls and texts already have their contact: one read, not a transaction.
  // Strongly consistent: an eventually consistent one could still see the claim of a contact just
  // deleted, and the call or text would name a contact that no longer exists.
  const claim = claimRead ? numberClaimOf(claimRead.row) : await readNumberClaim(tenantId, number);
  if (claim) return claim.contactId;
  // Texts and calls of one new number arriving together all try to create its contact: the one
  // that wins holds the claim, which answers the others (`insertWithClaims`).
  const inserted = await insertWithClaims(
    newContact(tenantId, { displayName: number, phoneNumber: number, source }, now),
  );
  return inserted.ok ? inserted.contact.id : (inserted.numberHolder as NumberClaim).contactId;
}

export type ContactPage = Page<Contact> & { deletedContacts?: DeletedContact[]; nextUpdatedSince?: string };

export async function listContacts(tenantId: string, input: ListContactsInput, now = new Date()): Promise<ContactPage> {
  if (input.externalId !== undefined) return contactByExternalId(tenantId, input.externalId, input.includeAutoCreated);
  if (input.updatedSince !== undefined) {
    const page = await changesPage(
      tenantId,
      { ...input, updatedSince: input.updatedSince, includeDeleted: input.includeDeleted === true },
      fromItem,
      now,
    );
    return {
      items: page.contacts,
      nextCursor: page.nextCursor,
      nextUpdatedSince: page.nextUpdatedSince,
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

/** Whether custom fields given change the stored ones (`null`: all removed; an object: its keys merged). */
const customFieldsChange = (stored: Record<string, string> | null, given: Record<string, string | null> | null) =>
  given === null ? stored !== null : Object.entries(given).some(([key, value]) => (stored?.[key] ?? null) !== value);

/** True when the patch gives some field a value the contact does not have (the batch's `unchanged` is its opposite). */
export function patchChanges(current: Contact, patch: UpdateContactInput): boolean {
  return Object.entries(patch).some(([field, value]) => {
    if (value === undefined) return false;
    if (field === 'customFields')
      return customFieldsChange(current.customFields, value as Record<string, string | null> | null);
    return current[field as keyof Contact] !== value;
  });
}

export type UpdateOptions = {
  /** The batch's match: the contact must still be the one it matched; false decides again (LOST_RACE). */
  expect?: (current: Contact) => boolean;
  /** Write nothing when every given field already has its value (the batch's `unchanged`). */
  skipUnchanged?: boolean;
  /** The API request the update comes from, named by its event. */
  origin?: RequestOrigin;
};

export type Updated = { contact: Contact; changed: boolean };

/** Rounds of a PATCH: each lost round means another writer changed the contact in between. */
/**
 * Every writer of a contact's fields takes a time after the one it read and commits only if no later time committed
 * meanwhile, so concurrent writers of one contact (of different custom fields, say) each lose a round to those that
 * committed first: 8 rounds, each after a short random pause (`afterLostRace`), let 16 at once all commit.
 */
const UPDATE_ROUNDS = { what: 'updateContact: the contact kept changing', rounds: 8, site: 'contacts.update' };

/** A pause of 0 to 10 ms, so writers that lost to each other read again apart rather than together. */
const afterLostRace = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 10));

/** PATCH /contacts/{id}: only the given fields change; a new number or external id moves its claim atomically. */
export async function updateContact(
  tenantId: string,
  contactId: string,
  patch: UpdateContactInput,
  now?: Date,
  origin: RequestOrigin = null,
): Promise<Contact> {
  const round = () => updateRound(tenantId, contactId, patch, now ?? new Date(), { origin });
  return (await optimisticRounds(UPDATE_ROUNDS, round)).contact;
}

/** Both conditions. */
const andCondition = (a: Condition, b: Condition): Condition => ({
  expression: `${a.expression} AND ${b.expression}`,
  names: { ...a.names, ...b.names },
  values: { ...a.values, ...b.values },
});

/** An update as one round decided it: the row's new attributes and custom fields, and what moves. */
type UpdatePlan = {
  next: Contact;
  written: Written;
  custom: CustomFieldsWrite;
  search: Reindex;
  stamp: Date;
  numberMoves: boolean;
  externalIdMoves: boolean;
  searchChanges: boolean;
  ledger?: LedgerSnapshot;
};

/** What an update writes over the row read: only the fields the patch names, and custom fields merged by key. */
async function planUpdate(
  tenantId: string,
  read: ContactRow,
  patch: UpdateContactInput,
  stamp: Date,
  origin: RequestOrigin,
): Promise<UpdatePlan> {
  const { contact: current, indexed } = read;
  const custom = customFieldsWrite(read.row, patch.customFields);
  const next: Contact = {
    ...current,
    ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    customFields: patch.customFields === undefined ? current.customFields : custom.merged,
    updatedAt: nowIso(stamp),
    version: current.version + 1,
  };
  if (patch.phoneNumber !== undefined) next.normalizedNumber = patch.phoneNumber;
  const search = reindex(tenantId, current.id, indexed, next);
  const numberMoves = current.normalizedNumber !== next.normalizedNumber;
  const externalIdMoves = current.externalId !== next.externalId;
  // A new number brings its own consent: the ledger's row, copied and checked unchanged.
  const ledger = numberMoves ? await ledgerSnapshot(tenantId, next.normalizedNumber as string) : undefined;
  if (ledger) Object.assign(next, withConsentFields(ledger.consent));
  // Only the fields this PATCH writes: a value derived from the rest of `current` would
  // overwrite what a concurrent writer (an adoption, another PATCH) just set.
  const written: Written = {
    displayName: patch.displayName,
    phoneNumber: patch.phoneNumber,
    normalizedNumber: patch.phoneNumber,
    company: patch.company,
    tag: patch.tag,
    notes: patch.notes,
    ...externalIdAttributes(tenantId, externalIdMoves ? next.externalId : undefined),
    ...changeStamp(tenantId, stamp, origin),
    ...(ledger && consentAttributes(ledger.consent)),
  };
  const searchChanges = touchesSearch(patch) && search.changed;
  return { next, written, custom, search, stamp, numberMoves, externalIdMoves, searchChanges, ledger };
}

/** The condition that the row still holds the number and the external id it was read with. */
const stillAsRead = (current: Contact): Condition =>
  andCondition(
    {
      expression: `${CONDITION.rowExists} AND #currentNumberAttr = :currentNumber`,
      names: { '#currentNumberAttr': 'normalizedNumber' },
      values: { ':currentNumber': current.normalizedNumber },
    },
    externalIdAsRead(current.externalId),
  );

/**
 * An update that moves no claim and no search entry: one conditional write of the contact row, guarded
 * on `updatedAt` still being before its stamp, so concurrent writers of one contact (of different custom
 * fields, say) each commit with a version and a time of their own. LOST_RACE when `condition` no longer
 * holds (deleted, renumbered or re-identified meanwhile, or overtaken).
 */
async function updateInPlace(key: Key, plan: UpdatePlan, condition: Condition): Promise<RoundResult<Updated>> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: key,
        ...contactWrite(
          plan.written,
          { ...plan.search, changed: false },
          andCondition(condition, updatedBefore(plan.stamp)),
          plan.custom,
        ),
        // The row as this write left it: `next` comes from an older read and would hide a concurrent writer's keys.
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { contact: fromItem(Attributes as Item), changed: true };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    await afterLostRace();
    return LOST_RACE;
  }
}

/** Reads the contact an update round changes; LOST_RACE when a batch's match is gone. */
async function readForUpdate(
  tenantId: string,
  contactId: string,
  options: UpdateOptions,
): Promise<RoundResult<ContactRow>> {
  try {
    // Strongly consistent: the conditions below compare with what was read, and a replica's older row fails them.
    return await readContactRow(tenantId, contactId);
  } catch (err) {
    if (err instanceof NotFoundError && options.expect) return LOST_RACE;
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

/**
 * One round of an update: read the contact, write what the patch changes conditioned on what was
 * read. LOST_RACE when the contact changed in between (or, with `expect`, is gone or no longer the
 * one matched); ContactConflictError when another contact holds the new number or external id;
 * ValidationError when the merged custom fields break a limit.
 */
export async function updateRound(
  tenantId: string,
  contactId: string,
  patch: UpdateContactInput,
  now: Date,
  options: UpdateOptions = {},
): Promise<RoundResult<Updated>> {
  const read = await readForUpdate(tenantId, contactId, options);
  if (read === LOST_RACE) return LOST_RACE;
  const current = read.contact;
  if (options.expect && !options.expect(current)) return LOST_RACE;
  if (options.skipUnchanged && !patchChanges(current, patch)) return { contact: current, changed: false };
  const plan = await planUpdate(tenantId, read, patch, stampAfter(now, current.updatedAt), options.origin ?? null);
  if (!plan.numberMoves && !plan.searchChanges && !plan.externalIdMoves) {
    // A PATCH of a searched field that leaves the entries as they are still needs them as read:
    // a rename committed since would otherwise keep entries this write no longer matches.
    const asRead = stillAsRead(current);
    return updateInPlace(
      contactKey(tenantId, contactId),
      plan,
      touchesSearch(patch) ? andCondition(asRead, plan.search.guard) : asRead,
    );
  }
  return updateWithMoves(tenantId, read, plan);
}

/**
 * An update that moves the number's claim, the external id's or search entries: one transaction, the row
 * guarded on its sequence as read, so the answer (`next`) is exactly the row it leaves.
 */
async function updateWithMoves(tenantId: string, read: ContactRow, plan: UpdatePlan): Promise<RoundResult<Updated>> {
  const { contact: current } = read;
  const contactId = current.id;
  const { next, search } = plan;
  const asRead = andCondition(stillAsRead(current), sequenceAsRead(read.row));
  const contactUpdate: TransactItem = {
    Update: {
      TableName: TABLE_NAME,
      Key: contactKey(tenantId, contactId),
      // Also still auto-created or named as read: a new claim copies that flag. And still filed under the
      // search entries read, which this write replaces.
      ...contactWrite(
        plan.written,
        { ...search, changed: plan.searchChanges },
        andCondition(asRead, search.guard),
        plan.custom,
      ),
    },
  };
  const claimMoves = plan.numberMoves ? claimMove(tenantId, contactId, current, next.normalizedNumber as string) : {};
  const externalIdWrites = plan.externalIdMoves
    ? externalIdMove(tenantId, contactId, current.externalId, next.externalId)
    : {};
  const refusal = await new NamedTransaction<UpdatePart>()
    .add('contact', contactUpdate)
    .addAll(claimMoves)
    .addAll(externalIdWrites)
    .add('searchRows', ...search.writes)
    .add('consentUnchanged', plan.ledger?.unchanged)
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

/** The condition that a row's sequence number is still the one read (no write of it since). */
function sequenceAsRead(row: Item): Condition {
  const sequence = rowSequenceOf(row);
  return sequence > 0
    ? {
        expression: '#sequenceAsRead = :sequenceAsRead',
        names: { '#sequenceAsRead': ROW_SEQUENCE },
        values: { ':sequenceAsRead': sequence },
      }
    : { expression: 'attribute_not_exists(#sequenceAsRead)', names: { '#sequenceAsRead': ROW_SEQUENCE } };
}

const DELETE_ROUNDS = { what: 'deleteContact: the contact kept changing', rounds: 4, site: 'contacts.delete' };

/**
 * DELETE /contacts/{id}: the contact, its claims and its search rows go together, so the number
 * and the external id are free again, and its tombstone takes its place in the feed of changes
 * (with the sequence number after the contact's last: the delete is its newest change).
 */
export async function deleteContact(
  tenantId: string,
  contactId: string,
  origin: RequestOrigin = null,
  now?: Date,
): Promise<void> {
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
          Item: tombstoneItem(current, sequence + 1, now ?? new Date(), origin),
          ConditionExpression: CONDITION.rowIsNew,
        },
      },
    ]);
    // Cancelled: the contact changed since it was read; read it again.
    return reasons ? LOST_RACE : true;
  });
}
