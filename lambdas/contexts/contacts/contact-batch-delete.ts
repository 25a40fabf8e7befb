import { runWithDeadline } from '../../shared/deadline';
import { NotFoundError, TemporarilyUnavailableError } from '../../shared/errors';
import { batchGetItems } from '../../shared/table/batch-get';
import { isContention } from '../../shared/table/contention';
import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { answerInPasses, ITEM_START_RESERVE_MS, timeLeftFor } from './batch-items';
import { readExternalIdClaim } from './contact-claims';
import { externalIdClaimKey } from './contact-rows';
import type { RequestOrigin } from './contact-rows';
import { deleteContact } from './contacts';
import type { ContactDeleteItemInput, ContactDeleteResult } from './schemas';

/**
 * `POST /contacts/batch/delete`: up to 100 contacts, each named by its id or its external id,
 * each deleted by the single delete (`deleteContact`: the contact, its claims and search entries
 * go, its tombstone takes its place, and the stream raises `contact.deleted`), with an answer per
 * item in request order. The external ids are read first, in one batch read; then items naming
 * the same contact are answered by the first of them (docs/decisions.md, "Batch delete"), and the
 * others run a few at a time, in passes, watching the deadline, as the batch upsert does.
 */
export type DeleteEntry = { index: number; item: ContactDeleteItemInput } | { index: number; invalid: string };

/** An item to run: the contact it names as the batch read found it (undefined: an external id nobody held). */
type Target = { index: number; item: ContactDeleteItemInput; contactId: string | undefined };

/** Rounds of an item by external id: each lost round means its contact was deleted and another took the id. */
const EXTERNAL_ID_ROUNDS = {
  what: "deleteContacts: an item's external id kept moving",
  rounds: 3,
  site: 'contacts.batchDelete',
};

const fieldOf = (item: ContactDeleteItemInput) => (item.id !== undefined ? 'id' : 'externalId');

const answer = (
  target: Target,
  status: ContactDeleteResult['status'],
  error: string | null = null,
  code: ContactDeleteResult['code'] = null,
  contactId = target.contactId ?? null,
): ContactDeleteResult => ({
  index: target.index,
  status,
  contactId,
  externalId: target.item.externalId ?? null,
  error,
  code,
});

const unavailable = (target: Target, why: string) =>
  answer(
    target,
    'unavailable',
    `contacts[${target.index}]: ${why}; nothing was deleted for it, send it again`,
    'temporarily_unavailable',
  );

const notReached = (target: Target) => unavailable(target, "not reached before the request's time ran out");

const notFound = (target: Target) =>
  target.item.id !== undefined
    ? answer(target, 'not_found', `contacts[${target.index}].id: no contact has this id`, 'not_found')
    : answer(
        target,
        'not_found',
        `contacts[${target.index}].externalId: no contact holds this external id`,
        'not_found',
        null,
      );

/**
 * Deletes the contact the item names; the id deleted, or undefined when there was none. A contact
 * found by external id but deleted meanwhile frees the id: read it again, and delete the contact
 * that took it since, if one did.
 */
async function deleteNamed(tenantId: string, target: Target, origin: RequestOrigin): Promise<string | undefined> {
  let contactId = target.contactId;
  return optimisticRounds(EXTERNAL_ID_ROUNDS, async () => {
    if (contactId === undefined) return undefined;
    try {
      await deleteContact(tenantId, contactId, origin);
      return contactId;
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    if (target.item.externalId === undefined) return undefined;
    const holder = await readExternalIdClaim(tenantId, target.item.externalId);
    if (holder === undefined || holder === contactId) return undefined;
    contactId = holder;
    return LOST_RACE;
  });
}

async function deleteOne(tenantId: string, target: Target, origin: RequestOrigin): Promise<ContactDeleteResult> {
  try {
    const deleted = await deleteNamed(tenantId, target, origin);
    return deleted !== undefined ? answer(target, 'deleted', null, null, deleted) : notFound(target);
  } catch (err) {
    if (err instanceof TemporarilyUnavailableError || isContention(err))
      return unavailable(target, "the organization's data was too busy to take this item");
    throw err;
  }
}

/** The contact holding each external id the items name, read strongly consistent in one BatchGetItem per 100. */
async function externalIdHolders(tenantId: string, items: readonly ContactDeleteItemInput[]) {
  const externalIds = [...new Set(items.flatMap((item) => (item.externalId !== undefined ? [item.externalId] : [])))];
  const rows = await batchGetItems(
    externalIds.map((id) => externalIdClaimKey(tenantId, id)),
    { consistentRead: true },
  );
  const byPk = new Map(rows.map((row) => [row.pk as string, row.contactId as string]));
  return new Map(externalIds.map((id) => [id, byPk.get(externalIdClaimKey(tenantId, id).pk)]));
}

/**
 * The first item naming each contact, and each later one with the item it repeats. Deterministic:
 * it depends on the request and the batch read alone, never on which delete ran first.
 */
function firstOfEach(targets: readonly Target[]) {
  const firstByContact = new Map<string, Target>();
  const repeats: { target: Target; first: Target }[] = [];
  for (const target of targets) {
    const key = target.contactId ?? `externalId:${target.item.externalId}`;
    const first = firstByContact.get(key);
    if (first) repeats.push({ target, first });
    else firstByContact.set(key, target);
  }
  return { firsts: [...firstByContact.values()], repeats };
}

/** A later item naming the contact of an earlier one: answered by what that one did, never deleting twice. */
function repeatAnswer(target: Target, first: Target, firstAnswer: ContactDeleteResult): ContactDeleteResult {
  const repeats = `names the contact of contacts[${first.index}]`;
  return firstAnswer.status === 'unavailable'
    ? unavailable(target, `${repeats}, which was not deleted in time`)
    : answer(
        target,
        'not_found',
        `contacts[${target.index}].${fieldOf(target.item)}: ${repeats}, which answers for it`,
        'not_found',
      );
}

const invalid = (index: number, error: string): ContactDeleteResult => ({
  index,
  status: 'invalid',
  contactId: null,
  externalId: null,
  error,
  code: 'validation_failed',
});

/**
 * The answers of a batch delete, one per entry in request order. `deadline` (epoch ms) is when the answer must leave:
 * no item starts, and no SDK retry is made, past it; the items left are answered `unavailable`, nothing deleted for them.
 * `origin` is the request each `contact.deleted` names.
 */
export async function deleteContacts(
  tenantId: string,
  entries: readonly DeleteEntry[],
  deadline = Infinity,
  origin: RequestOrigin = null,
): Promise<ContactDeleteResult[]> {
  const results = new Map<number, ContactDeleteResult>();
  const named: { index: number; item: ContactDeleteItemInput }[] = [];
  for (const entry of entries) {
    if ('invalid' in entry) results.set(entry.index, invalid(entry.index, entry.invalid));
    else named.push(entry);
  }
  const unresolved = named.map(({ index, item }): Target => ({ index, item, contactId: item.id }));
  await runWithDeadline(deadline, async () => {
    if (named.length === 0 || !timeLeftFor(deadline, ITEM_START_RESERVE_MS)) return;
    let holders: Map<string, string | undefined>;
    try {
      holders = await externalIdHolders(
        tenantId,
        named.map(({ item }) => item),
      );
    } catch (err) {
      if (!(err instanceof TemporarilyUnavailableError || isContention(err))) throw err;
      // The read was refused: nothing was deleted, every item may be sent again.
      const busy = "the organization's data was too busy to read the external ids";
      for (const target of unresolved) results.set(target.index, unavailable(target, busy));
      return;
    }
    const targets = unresolved.map((target) => ({
      ...target,
      contactId: target.item.id ?? holders.get(target.item.externalId!),
    }));
    const { firsts, repeats } = firstOfEach(targets);
    const answers = await answerInPasses(firsts, deadline, (target) => deleteOne(tenantId, target, origin), notReached);
    for (const [index, answered] of answers) results.set(index, answered);
    for (const { target, first } of repeats)
      results.set(target.index, repeatAnswer(target, first, answers.get(first.index)!));
  });
  for (const target of unresolved) if (!results.has(target.index)) results.set(target.index, notReached(target));
  return entries.map((entry) => results.get(entry.index)!);
}
