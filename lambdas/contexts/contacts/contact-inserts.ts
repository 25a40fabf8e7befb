import { TABLE_NAME } from '../../shared/aws';
import { msLeft } from '../../shared/deadline';
import { CONDITION, transactWrite, type Item, type TransactItem } from '../../shared/table/dynamo';
import { NamedTransaction, type Refusal } from '../../shared/table/named-transaction';
import { isContention } from '../../shared/table/contention';
import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { ledgerSnapshot, ledgerSnapshots, type LedgerSnapshot } from '../consent/ledger';
import { ITEM_START_RESERVE_MS } from './batch-items';
import { readExternalIdClaim, readNumberClaim } from './contact-claims';
import {
  manualContact,
  rowsOfNewContact,
  withConsentFields,
  type NumberClaim,
  type RequestOrigin,
} from './contact-rows';
import type { Contact, CreateContactInput } from './schemas';

/**
 * New contacts as they are written: a contact, its claims, its number's consent copied (checked
 * unchanged) and its search entries in one transaction, or several new contacts to a transaction
 * for a batch.
 */

export type Inserted =
  | { ok: true; contact: Contact }
  | { ok: false; numberHolder?: NumberClaim; externalIdHolder?: string };

/** Rounds of copying a number's consent again when it changed between the read and the write. */
const CONSENT_COPY_ROUNDS = {
  what: "insertWithClaims: the number's consent kept changing",
  rounds: 4,
  site: 'contacts.insert',
};

/** The parts of a new contact's transaction, by name. */
type NewContactPart = 'numberClaim' | 'externalIdClaim' | 'row' | 'consentUnchanged' | 'searchRows';

/**
 * A new contact's share of a transaction: its claims (each asking for the holder when taken), the
 * row with its number's consent copied, the ledger's check that the copy is still true, its
 * search entries.
 */
function newContactItems(
  draft: Contact,
  snapshot: LedgerSnapshot,
  origin: RequestOrigin,
): { contact: Contact; transaction: NamedTransaction<NewContactPart> } {
  const contact: Contact = { ...draft, ...withConsentFields(snapshot.consent) };
  const { claim, externalIdClaim, row, entries } = rowsOfNewContact(contact, origin);
  const claimPut = (Item: Item): TransactItem => ({
    Put: {
      TableName: TABLE_NAME,
      Item,
      ConditionExpression: CONDITION.rowIsNew,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  });
  return {
    contact,
    transaction: new NamedTransaction<NewContactPart>()
      .add('numberClaim', claimPut(claim))
      .add('externalIdClaim', externalIdClaim && claimPut(externalIdClaim))
      .add('row', { Put: { TableName: TABLE_NAME, Item: row, ConditionExpression: CONDITION.rowIsNew } })
      .add('consentUnchanged', snapshot.unchanged)
      .add('searchRows', ...entries),
  };
}

/**
 * Writes a contact, its claims and its search rows together, the contact with its number's consent
 * copied from the ledger (checked unchanged in the same transaction); on a lost race returns the
 * claims that won. Returns the contact as written.
 */
export async function insertWithClaims(draft: Contact, origin: RequestOrigin = null): Promise<Inserted> {
  return optimisticRounds(CONSENT_COPY_ROUNDS, async () => {
    const { contact, transaction } = newContactItems(
      draft,
      await ledgerSnapshot(draft.tenantId, draft.normalizedNumber as string),
      origin,
    );
    let refusal: Refusal<NewContactPart> | undefined;
    try {
      refusal = await transaction.write();
    } catch (err) {
      // Writers of one new number (or external id) collide until one of them commits; the claims
      // then answer the others as their conditions would have. Only while nobody holds either is
      // the contention theirs to report (nothing was written).
      if (!isContention(err)) throw err;
      const [numberHolder, externalIdHolder] = await Promise.all([
        readNumberClaim(contact.tenantId, contact.normalizedNumber as string),
        contact.externalId !== null ? readExternalIdClaim(contact.tenantId, contact.externalId) : undefined,
      ]);
      if (!numberHolder && !externalIdHolder) throw err;
      return {
        ok: false as const,
        ...(numberHolder && { numberHolder }),
        ...(externalIdHolder && { externalIdHolder }),
      };
    }
    if (!refusal) return { ok: true as const, contact };
    const numberTaken = refusal.failed('numberClaim')?.item;
    const externalIdTaken = refusal.failed('externalIdClaim')?.item;
    if (numberTaken || externalIdTaken) {
      return {
        ok: false as const,
        ...(numberTaken && {
          numberHolder: { contactId: numberTaken.contactId as string, named: numberTaken.named === true },
        }),
        ...(externalIdTaken && { externalIdHolder: externalIdTaken.contactId as string }),
      };
    }
    // The number's consent changed between the read and the write: copy it again.
    if (refusal.failed('consentUnchanged')) return LOST_RACE;
    throw new Error(`insertWithClaims: contact ${contact.id} was refused (${refusal.codes})`);
  });
}

/** DynamoDB's most items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;
/** Transactions of new contacts written at once by one batch. */
const GROUPS_IN_FLIGHT = 4;

/**
 * A group is started only when the time left holds the reserve and this many times the slowest group of the batch so
 * far: under a burst of batches (DynamoDB Local queues transactions) a group can take seconds, and one started just
 * before the reserve ran past API Gateway's 29 s (bench section 12). The first groups have nothing to go by.
 */
export const GROUP_TIME_MARGIN = 1.5;

/**
 * New contacts for numbers and external ids nobody held when last read, several to a transaction
 * (up to 100 items): a batch of new contacts in fewer round trips, charged the same per item.
 * Each transaction is all or nothing; the contacts of one that is refused (a claim taken or the
 * consent changed meanwhile, or contention) are returned for the caller to write one by one, as
 * a single create would.
 */
export async function insertNewContacts(
  tenantId: string,
  inputs: readonly CreateContactInput[],
  now: Date,
  origin: RequestOrigin = null,
  /** Told the contacts of each group not started for lack of time (also in `refused`): nothing was tried for them. */
  onUnstarted?: (inputs: CreateContactInput[]) => void,
): Promise<{ created: Contact[]; refused: CreateContactInput[] }> {
  const snapshots = await ledgerSnapshots(
    tenantId,
    inputs.map((input) => input.phoneNumber),
  );
  const groups: { inputs: CreateContactInput[]; contacts: Contact[]; items: TransactItem[] }[] = [];
  for (const input of inputs) {
    const { contact, transaction } = newContactItems(
      manualContact(tenantId, input, now),
      snapshots.get(input.phoneNumber)!,
      origin,
    );
    const { items } = transaction;
    let group = groups[groups.length - 1];
    if (!group || group.items.length + items.length > MAX_TRANSACTION_ITEMS)
      groups.push((group = { inputs: [], contacts: [], items: [] }));
    group.inputs.push(input);
    group.contacts.push(contact);
    group.items.push(...items);
  }
  const created: Contact[] = [];
  const refused: CreateContactInput[] = [];
  // A few transactions at once: a batch of new contacts in about a fifth of a second on DynamoDB.
  let next = 0;
  let slowestMs = 0;
  const writer = async () => {
    while (next < groups.length) {
      const group = groups[next++];
      // Past the request's deadline, or too near it for a group as slow as the slowest so far, no group starts: its
      // contacts are left to the caller, which answers them `unavailable` (a burst of batches at once could otherwise
      // run past API Gateway's 29 s: a 504, no report).
      if (msLeft() < ITEM_START_RESERVE_MS + slowestMs * GROUP_TIME_MARGIN) {
        refused.push(...group.inputs);
        onUnstarted?.(group.inputs);
        continue;
      }
      const startedAt = Date.now();
      const written = await transactWrite(group.items).then(
        (reasons) => reasons === undefined,
        (err: unknown) => {
          if (isContention(err)) return false;
          throw err;
        },
      );
      slowestMs = Math.max(slowestMs, Date.now() - startedAt);
      if (written) created.push(...group.contacts);
      else refused.push(...group.inputs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(GROUPS_IN_FLIGHT, groups.length) }, writer));
  return { created, refused };
}

/** A contact as POST /contacts (or a batch) writes it for a number nobody holds. */
export const insertNewContact = (
  tenantId: string,
  input: CreateContactInput,
  now: Date,
  origin: RequestOrigin = null,
): Promise<Inserted> => insertWithClaims(manualContact(tenantId, input, now), origin);
