import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { batchGetItems } from '../../shared/table/batch-get';
import { str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { ownPartitionKey } from '../../shared/table/keys';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { updateExpression } from '../../shared/table/update-expression';
import { CHANGED_AT, changeRequestParts, ROW_TYPES, type ChangeRequest } from '../../shared/table/row-types';

/**
 * The consent ledger: one row per (organization, number), the recipient's decision about their
 * number for the whole organization. It is keyed by the number, never by a contact, so deleting,
 * renumbering, adopting or re-creating contacts cannot change it.
 *
 * A change carries the carrier's time (`at`); the row keeps the latest, so a keyword the carrier
 * retried late never overrides a newer one and replaying a change is harmless. The send path
 * checks the row in the same transaction that charges and stores the text
 * (`notOptedOutCheck`), so a STOP that lands between a read and the charge cannot be missed.
 *
 * The contact that holds a number carries a copy of its row (so a page of contacts is one read):
 * every change is written with the holder's copy (contacts/consent-copies.ts), and every write that
 * gives a contact a number copies the row with `ledgerSnapshot`'s check.
 */
export type ConsentStatus = 'unknown' | 'opted_in' | 'opted_out';

export type Consent = {
  status: ConsentStatus;
  /**
   * What set it: `sms_keyword` (the number texted a keyword), `carrier_opt_out` (the carrier refused a send), or
   * one of the API's sources (./sources.ts).
   */
  source: string | null;
  /** The carrier's time of the change (ISO 8601, milliseconds). */
  at: string | null;
  /** Human-readable, e.g. `Replied STOP`; never a message body. */
  note: string | null;
};

/**
 * What a person agreed to (or, for an opt-out, asked for), where and when: the proof an integrator
 * records with `POST /consent`. Kept on the ledger row with the change it proves and in its history;
 * never copied onto contacts, never in an event, never logged.
 */
export type ConsentEvidence = { statement: string; where: string; collectedAt: string; reference?: string };

export type ConsentChange = {
  status: Exclude<ConsentStatus, 'unknown'>;
  source: string;
  at: Date;
  note: string;
  /** Only changes recorded through the API carry it (required there for an opt-in). */
  evidence?: ConsentEvidence;
  /** The API request recording it (`POST /consent`), which consent.changed names; none for a keyword or the carrier. */
  request?: ChangeRequest | null;
};

export const NO_CONSENT_RECORDED: Consent = { status: 'unknown', source: null, at: null, note: null };

/**
 * A partition of its own per number: every contact written for a number checks its row in the
 * same transaction, so on the organization's partition it would take a share of every create
 * (docs/capacity.md).
 */
export const consentKey = (tenantId: string, number: string) => ownPartitionKey(tenantId, 'consent', number);

export function fromItem(item: Item | undefined): Consent {
  if (!item) return NO_CONSENT_RECORDED;
  return {
    status: (item.consentStatus as ConsentStatus) ?? 'unknown',
    source: str(item.consentSource),
    at: str(item.consentAt),
    note: str(item.consentNote),
  };
}

/** Named conditions of the ledger. */
const LATER_THAN_RECORDED = 'attribute_not_exists(#at) OR #at <= :at';
const NOT_OPTED_OUT = 'attribute_not_exists(#status) OR #status <> :optedOut';

/**
 * The ledger's share of a transaction that records a change (an inbound keyword with its
 * message). Fails its condition when a later change is on record: the caller drops this item
 * and writes the rest (`consentChangeIsStale`).
 */
/**
 * The contact holding the number when a change is recorded, as consent.changed names it: written on the ledger row
 * with the change (removed when nobody holds the number), with the version the holder's copy of the change gives it.
 */
export type ConsentHolder = { contactId: string; externalId: string | null; version: number };

export const HOLDER_ATTRIBUTES = {
  contactId: 'holderContactId',
  externalId: 'holderExternalId',
  version: 'holderVersion',
} as const;

const holderParts = (holder: ConsentHolder | undefined) => {
  const { contactId, externalId, version } = HOLDER_ATTRIBUTES;
  if (!holder) return { set: {}, remove: [contactId, externalId, version] };
  return {
    set: { [contactId]: holder.contactId, [version]: holder.version, [externalId]: holder.externalId ?? undefined },
    remove: holder.externalId === null ? [externalId] : [],
  };
};

export function consentChangeUpdate(
  tenantId: string,
  number: string,
  change: ConsentChange,
  now = new Date(),
  holder?: ConsentHolder,
): TransactItem {
  const holding = holderParts(holder);
  const request = changeRequestParts(change.request);
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: consentKey(tenantId, number),
      // The row's sequence and `changedAt` ride along (shared/table/row-sequence.ts): each change is a
      // `consent.changed` event, and a change the ledger refuses (a later one on record) bumps nothing.
      ...updateExpression(
        withRowSequenceBump({
          set: {
            type: ROW_TYPES.consent,
            tenantId,
            number,
            consentStatus: change.status,
            consentSource: change.source,
            consentAt: change.at.toISOString(),
            consentNote: change.note,
            // A later keyword or carrier opt-out has none: the evidence shown is always the current change's.
            consentEvidence: change.evidence ?? null,
            [CHANGED_AT]: now.getTime(),
            ...holding.set,
            ...request.set,
          },
          remove: [...holding.remove, ...request.remove],
        }),
        { expression: LATER_THAN_RECORDED, names: { '#at': 'consentAt' }, values: { ':at': change.at.toISOString() } },
      ),
    },
  };
}

/**
 * A number's ledger row as a write that copies it read it, with the check that it is still that row when the copy
 * commits.
 */
export type LedgerSnapshot = { consent: Consent; unchanged: TransactItem };

/**
 * The ledger row of a number as a write that copies it reads it (a contact created for the
 * number, or renumbered to it), with the check that keeps the copy true: the row is still the one
 * read when the copy commits (a change in between cancels the write, which reads again).
 */
export async function ledgerSnapshot(tenantId: string, number: string): Promise<LedgerSnapshot> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: consentKey(tenantId, number), ConsistentRead: true }),
  );
  return snapshotOf(tenantId, number, Item);
}

/**
 * The snapshots of many numbers in one strongly consistent read per 100 numbers (a batch of new
 * contacts): AWS charges each requested key as a GetItem of it would be charged.
 */
export async function ledgerSnapshots(
  tenantId: string,
  numbers: readonly string[],
): Promise<Map<string, LedgerSnapshot>> {
  const unique = [...new Set(numbers)];
  const rows = new Map(
    (
      await batchGetItems(
        unique.map((n) => consentKey(tenantId, n)),
        { consistentRead: true },
      )
    ).map((item) => [item.number as string, item]),
  );
  return new Map(unique.map((n) => [n, snapshotOf(tenantId, n, rows.get(n))]));
}

function snapshotOf(tenantId: string, number: string, Item: Item | undefined): LedgerSnapshot {
  const consent = fromItem(Item);
  const unchanged: TransactItem = {
    ConditionCheck: {
      TableName: TABLE_NAME,
      Key: consentKey(tenantId, number),
      ...(Item && typeof Item.consentAt === 'string'
        ? {
            // The status too: a change carrying the same time as the one recorded replaces it (LATER_THAN_RECORDED).
            ConditionExpression: '#at = :at AND #status = :status',
            ExpressionAttributeNames: { '#at': 'consentAt', '#status': 'consentStatus' },
            ExpressionAttributeValues: { ':at': Item.consentAt, ':status': Item.consentStatus },
          }
        : Item
          ? { ConditionExpression: 'attribute_not_exists(#at)', ExpressionAttributeNames: { '#at': 'consentAt' } }
          : { ConditionExpression: 'attribute_not_exists(pk)' }),
    },
  };
  return { consent, unchanged };
}

/** A consent as the attributes a row stores it under (the ledger's own, and its copies on contacts). */
export const consentAttributes = (consent: Consent): Item => ({
  consentStatus: consent.status,
  consentSource: consent.source,
  consentAt: consent.at,
  consentNote: consent.note,
});

/** A change as the consent it records. */
export const consentOfChange = (change: ConsentChange): Consent => ({
  status: change.status,
  source: change.source,
  at: change.at.toISOString(),
  note: change.note,
});

/** The send transaction's guard: the number has not opted out (no row, `unknown` or `opted_in`). */
export function notOptedOutCheck(tenantId: string, number: string): TransactItem {
  return {
    ConditionCheck: {
      TableName: TABLE_NAME,
      Key: consentKey(tenantId, number),
      ConditionExpression: NOT_OPTED_OUT,
      ExpressionAttributeNames: { '#status': 'consentStatus' },
      ExpressionAttributeValues: { ':optedOut': 'opted_out' },
    },
  };
}

export async function consentOf(tenantId: string, number: string): Promise<Consent> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: consentKey(tenantId, number), ConsistentRead: true }),
  );
  return fromItem(Item);
}
