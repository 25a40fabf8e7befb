import { runWithDeadline } from '../../shared/deadline';
import { TemporarilyUnavailableError, ValidationError } from '../../shared/errors';
import { isContention } from '../../shared/table/contention';
import { LOST_RACE, optimisticRounds, type RoundResult } from '../../shared/table/optimistic-rounds';
import { answerInPasses, ITEM_START_RESERVE_MS, timeLeftFor } from './batch-items';
import { claimsOf, readExternalIdClaim, readNumberClaim } from './contact-claims';
import { insertNewContact, insertNewContacts } from './contact-inserts';
import { adoptRound, updateRound, type Updated } from './contacts';
import type { RequestOrigin } from './contact-rows';
import { ContactConflictError } from './errors';
import type { ContactBatchItemInput, ContactBatchResult, ContactBatchStatus } from './schemas';

/**
 * `POST /contacts/batch`: up to 100 contacts, each created or updated on its own, with an answer
 * per item in request order. First the claims of every item are read at once, and the items
 * nobody's claims name are created several to a transaction (an import of new contacts). Every
 * other item (and one whose transaction was refused meanwhile) is one optimistic round of its own:
 * read the claims of its external id and its number, decide, write conditionally (the contact's
 * own transaction, as a single create, adoption or PATCH writes it); a round that lost a race
 * reads and decides again.
 * So no item waits for another, one bad item fails nothing else, and two batches naming the same
 * contact (by external id or number) at once end with one contact: the claim of each lets one
 * writer create it, and the other finds it and updates it.
 *
 * How an item is matched (docs/decisions.md, "A directory a CRM can sync"):
 * 1. by its `externalId`, when a contact holds it: that contact takes the item's fields (a new
 *    number moves it, or is a conflict when another contact holds that number);
 * 2. else by its number: an auto-created contact is adopted (as POST /contacts does); a named one
 *    takes the item's fields and, when it has no external id yet, the item's (a contact with
 *    another external id is a conflict);
 * 3. else it is created.
 * Fields an item leaves out stay as they are on a contact it updates (as PATCH); `unchanged` when
 * every field it gives already has that value (nothing is written).
 */
export type BatchEntry = { index: number; item: ContactBatchItemInput } | { index: number; invalid: string };

/** Rounds of one item: each lost round means another writer changed its contact or a claim meanwhile. */
const ITEM_ROUNDS = {
  what: "upsertContacts: an item's contact kept changing",
  rounds: 4,
  site: 'contacts.batchUpsert',
};

/** An item the batch had no time left for: nothing written, for the client to send again. */
const notReached = (index: number, item: ContactBatchItemInput): ContactBatchResult => ({
  index,
  status: 'unavailable',
  contactId: null,
  externalId: item.externalId ?? null,
  error: `contacts[${index}]: not reached before the request's time ran out; nothing was written for it, send it again`,
  code: 'temporarily_unavailable',
});

type Decided = { status: Exclude<ContactBatchStatus, 'conflict' | 'invalid' | 'unavailable'>; contactId: string };

const fromUpdate = (updated: RoundResult<Updated>): RoundResult<Decided> =>
  updated === LOST_RACE
    ? LOST_RACE
    : { status: updated.changed ? 'updated' : 'unchanged', contactId: updated.contact.id };

/** One round of one item: read its claims, decide how it is matched, write. */
async function upsertRound(
  tenantId: string,
  item: ContactBatchItemInput,
  now: Date,
  origin: RequestOrigin,
): Promise<RoundResult<Decided>> {
  const externalId = item.externalId ?? undefined;
  const [byExternalId, byNumber] = await Promise.all([
    externalId !== undefined ? readExternalIdClaim(tenantId, externalId) : undefined,
    readNumberClaim(tenantId, item.phoneNumber),
  ]);
  if (byExternalId) {
    return fromUpdate(
      await updateRound(tenantId, byExternalId, item, now, {
        expect: (contact) => contact.externalId === externalId,
        skipUnchanged: true,
        origin,
      }),
    );
  }
  if (byNumber && !byNumber.named) {
    const adopted = await adoptRound(tenantId, byNumber.contactId, item, now, origin);
    return adopted === LOST_RACE ? LOST_RACE : { status: 'adopted', contactId: adopted.id };
  }
  if (byNumber) {
    const expect = (contact: { id: string; normalizedNumber: string | null; externalId: string | null }) => {
      if (contact.normalizedNumber !== item.phoneNumber) return false;
      // The number's contact is another record of yours: never merged into this one.
      if (externalId !== undefined && contact.externalId !== null && contact.externalId !== externalId)
        throw new ContactConflictError(contact.id);
      return true;
    };
    return fromUpdate(
      await updateRound(tenantId, byNumber.contactId, item, now, { expect, skipUnchanged: true, origin }),
    );
  }
  const inserted = await insertNewContact(tenantId, item, now, origin);
  // A claim taken since it was read: the item now matches that contact; decide again.
  return inserted.ok ? { status: 'created', contactId: inserted.contact.id } : LOST_RACE;
}

async function upsertOne(
  tenantId: string,
  index: number,
  item: ContactBatchItemInput,
  origin: RequestOrigin,
): Promise<ContactBatchResult> {
  const answer = { index, externalId: item.externalId ?? null };
  try {
    const decided = await optimisticRounds(ITEM_ROUNDS, () => upsertRound(tenantId, item, new Date(), origin));
    return { ...answer, ...decided, error: null, code: null };
  } catch (err) {
    // The item's custom fields merged with the contact's would break a limit: nothing was written for it.
    if (err instanceof ValidationError) return invalid(index, `contacts[${index}].${err.message}`, answer.externalId);
    if (err instanceof ContactConflictError) {
      const holder = err.details.contactId as string;
      return {
        ...answer,
        status: 'conflict',
        contactId: holder,
        error: `contacts[${index}].${err.field}: ${err.message} (contact ${holder})`,
        code: 'contact_conflict',
      };
    }
    if (err instanceof TemporarilyUnavailableError || isContention(err)) return busy(index, item);
    throw err;
  }
}

/** An item the organization's data was too busy for: nothing written, for the client to send again. */
const busy = (index: number, item: ContactBatchItemInput): ContactBatchResult => ({
  index,
  status: 'unavailable',
  contactId: null,
  externalId: item.externalId ?? null,
  error: `contacts[${index}]: the organization's data was too busy to take this contact; nothing was written for it, send it again`,
  code: 'temporarily_unavailable',
});

/** A later item naming the number or external id of an earlier one: which would win would depend on timing. */
function repeated(entries: readonly BatchEntry[]): Map<number, string> {
  const refused = new Map<number, string>();
  const firstByNumber = new Map<string, number>();
  const firstByExternalId = new Map<string, number>();
  for (const entry of entries) {
    if (!('item' in entry)) continue;
    const { index, item } = entry;
    const earlierExternalId = item.externalId ? firstByExternalId.get(item.externalId) : undefined;
    const earlierNumber = firstByNumber.get(item.phoneNumber);
    if (earlierExternalId !== undefined)
      refused.set(
        index,
        `contacts[${index}].externalId: repeats contacts[${earlierExternalId}] (a batch names each external id once)`,
      );
    else if (earlierNumber !== undefined)
      refused.set(
        index,
        `contacts[${index}].phoneNumber: repeats contacts[${earlierNumber}] (a batch names each number once)`,
      );
    else {
      firstByNumber.set(item.phoneNumber, index);
      if (item.externalId) firstByExternalId.set(item.externalId, index);
    }
  }
  return refused;
}

const invalid = (index: number, error: string, externalId: string | null = null): ContactBatchResult => ({
  index,
  status: 'invalid',
  contactId: null,
  externalId,
  error,
  code: 'validation_failed',
});

type Pending = { index: number; item: ContactBatchItemInput };
type Claims = Awaited<ReturnType<typeof claimsOf>>;
type NamingField = 'externalId' | 'phoneNumber';

/** The contacts an item names, as the claims read say: the holder of its external id, and of its number. */
function contactsNamedBy(item: ContactBatchItemInput, claims: Claims): [NamingField, string][] {
  const named: [NamingField, string | undefined][] = [
    ['externalId', item.externalId ? claims.externalIdClaims.get(item.externalId) : undefined],
    ['phoneNumber', claims.numberClaims.get(item.phoneNumber)?.contactId],
  ];
  return named.filter((pair): pair is [NamingField, string] => pair[1] !== undefined);
}

/**
 * Indirect overlaps: a later item naming, by its number or its external id as the directory stood when the batch read
 * it, a contact an earlier item names (item 0 moves contact X from number A to B by its external id, item 1 names A).
 * Applied in one order or the other they end differently (X updated, or a new contact at A), so items are judged in
 * request order: the later is `conflict` naming the contact, nothing written for it, and the earlier runs as if alone.
 * One answer, whatever the interleaving of the writes.
 */
export function overlaps(pending: readonly Pending[], claims: Claims): Map<number, ContactBatchResult> {
  const refused = new Map<number, ContactBatchResult>();
  const namedBy = new Map<string, number>();
  for (const { index, item } of pending) {
    const named = contactsNamedBy(item, claims);
    const clash = named.find(([, contactId]) => namedBy.has(contactId));
    if (!clash) {
      for (const [, contactId] of named) namedBy.set(contactId, index);
      continue;
    }
    const [field, contactId] = clash;
    refused.set(index, {
      index,
      status: 'conflict',
      contactId,
      externalId: item.externalId ?? null,
      error:
        `contacts[${index}].${field}: names contact ${contactId}, which contacts[${namedBy.get(contactId)}] names too; ` +
        'a batch changes each contact once, so nothing was written for this item: send it in a later batch',
      code: 'contact_conflict',
    });
  }
  return refused;
}

/**
 * Reads the claims of every pending item at once and judges them against each other (`overlaps`), then creates the
 * new ones (`createTheNew`). Returns what is left for the item-by-item rounds. Claims that cannot be read (the table
 * too busy) leave every item `unavailable`, nothing written: without them the overlaps cannot be judged.
 */
async function judgeAndCreate(
  tenantId: string,
  pending: readonly Pending[],
  results: Map<number, ContactBatchResult>,
  origin: RequestOrigin,
): Promise<Pending[]> {
  let claims: Claims;
  try {
    claims = await claimsOf(
      tenantId,
      pending.map(({ item }) => item),
    );
  } catch (err) {
    if (!(err instanceof TemporarilyUnavailableError || isContention(err))) throw err;
    for (const { index, item } of pending) results.set(index, busy(index, item));
    return [];
  }
  for (const [index, answer] of overlaps(pending, claims)) results.set(index, answer);
  return createTheNew(
    tenantId,
    pending.filter(({ index }) => !results.has(index)),
    claims,
    results,
    origin,
  );
}

/**
 * The items whose number and external id nobody holds, written several to a transaction
 * (`insertNewContacts`): an import of new contacts in a few round trips. Returns what is left for
 * the item-by-item rounds: items that match a contact, and those of a transaction refused meanwhile.
 */
async function createTheNew(
  tenantId: string,
  pending: readonly Pending[],
  { numberClaims, externalIdClaims }: Claims,
  results: Map<number, ContactBatchResult>,
  origin: RequestOrigin,
): Promise<Pending[]> {
  const isNew = ({ item }: Pending) =>
    !numberClaims.has(item.phoneNumber) && !(item.externalId && externalIdClaims.has(item.externalId));
  const fresh = pending.filter(isNew);
  if (fresh.length === 0) return [...pending];
  let written: Awaited<ReturnType<typeof insertNewContacts>>;
  // Contacts whose group the deadline left unstarted are answered `unavailable` now: one by one they would start
  // just as late, each as slow under the same burst.
  const unstarted = new Set<ContactBatchItemInput>();
  try {
    written = await insertNewContacts(
      tenantId,
      fresh.map(({ item }) => item),
      new Date(),
      origin,
      (inputs) => inputs.forEach((input) => unstarted.add(input as ContactBatchItemInput)),
    );
  } catch (err) {
    if (!(err instanceof TemporarilyUnavailableError || isContention(err))) throw err;
    return [...pending]; // the inserts' own reads were refused: every item goes one by one
  }
  // A batch names each number once, so a number names its item.
  const createdByNumber = new Map(written.created.map((contact) => [contact.normalizedNumber as string, contact.id]));
  for (const { index, item } of fresh) {
    if (unstarted.has(item)) results.set(index, notReached(index, item));
    const id = createdByNumber.get(item.phoneNumber);
    if (id)
      results.set(index, {
        index,
        status: 'created',
        contactId: id,
        externalId: item.externalId ?? null,
        error: null,
        code: null,
      });
  }
  return pending.filter(({ index }) => !results.has(index));
}

/**
 * The answers of a batch, one per entry in request order. `deadline` (epoch ms) is when the answer must leave: no
 * item starts, and no SDK retry is made, past it; the items left are answered `unavailable`, nothing written for them.
 * `origin` is the API request the batch comes from, named by the events of its writes.
 */
export async function upsertContacts(
  tenantId: string,
  entries: readonly BatchEntry[],
  deadline = Infinity,
  origin: RequestOrigin = null,
): Promise<ContactBatchResult[]> {
  const results = new Map<number, ContactBatchResult>();
  const repeats = repeated(entries);
  let pending: Pending[] = [];
  for (const entry of entries) {
    if ('invalid' in entry) results.set(entry.index, invalid(entry.index, entry.invalid));
    else if (repeats.has(entry.index))
      results.set(entry.index, invalid(entry.index, repeats.get(entry.index)!, entry.item.externalId ?? null));
    else pending.push(entry);
  }
  await runWithDeadline(deadline, async () => {
    if (pending.length > 0 && timeLeftFor(deadline, ITEM_START_RESERVE_MS))
      pending = await judgeAndCreate(tenantId, pending, results, origin);
    const answers = await answerInPasses(
      pending,
      deadline,
      ({ index, item }) => upsertOne(tenantId, index, item, origin),
      ({ index, item }) => notReached(index, item),
    );
    for (const [index, answer] of answers) results.set(index, answer);
  });
  return entries.map((entry) => results.get(entry.index)!);
}
