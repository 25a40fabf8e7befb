import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { PREFIX, sortKeyStartsWith } from '../../shared/table/keys';
import { consentKey, fromItem, type ConsentChange, type ConsentEvidence, type ConsentStatus } from './ledger';
import { CONSENT_HISTORY_LIMIT } from './sources';

/**
 * A number's consent history: one row per change the ledger took, in the partition of the number's
 * ledger row (`T#<org>#CONSENT#<e164>`), so a page of it is one Query of a partition no other
 * number shares, and it stays under the organization's key. Written in the transaction of the change
 * (contacts/consent-copies.ts), so a change the ledger refuses (a later one on record) leaves no
 * history. Kept as long as the ledger: it is the organization's proof.
 */

export type ConsentHistoryEntry = {
  status: Exclude<ConsentStatus, 'unknown'>;
  source: string;
  note: string | null;
  evidence: ConsentEvidence | null;
  /** The change's time: the carrier's for a keyword, the evidence's `collectedAt` (or the request's) for the API. */
  at: string;
};

/** A number's consent as `GET /consent` answers it: the ledger row, its evidence and its latest changes. */
export type ConsentRecord = {
  phoneNumber: string;
  status: ConsentStatus;
  source: string | null;
  note: string | null;
  evidence: ConsentEvidence | null;
  updatedAt: string | null;
  history: ConsentHistoryEntry[];
};

/**
 * The history row of a change. Its key is the change itself (time, status, source), so the same
 * change written again (a retried request) rewrites its row instead of adding one.
 */
export function consentHistoryPut(tenantId: string, number: string, change: ConsentChange): TransactItem {
  const at = change.at.toISOString();
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: {
        pk: consentKey(tenantId, number).pk,
        sk: `${PREFIX.consentHistory}${at}#${change.status}#${change.source}`,
        tenantId,
        number,
        status: change.status,
        source: change.source,
        note: change.note,
        evidence: change.evidence ?? null,
        at,
      },
    },
  };
}

/** The ledger row and the newest changes, read strongly consistently (a change just recorded shows). */
export async function readConsentRecord(tenantId: string, number: string): Promise<ConsentRecord> {
  const key = consentKey(tenantId, number);
  const range = sortKeyStartsWith(PREFIX.consentHistory);
  const [row, page] = await Promise.all([
    dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true })),
    dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: `pk = :pk AND ${range.condition}`,
        ExpressionAttributeNames: range.names,
        ExpressionAttributeValues: { ':pk': key.pk, ...range.values },
        ScanIndexForward: false,
        Limit: CONSENT_HISTORY_LIMIT,
        ConsistentRead: true,
      }),
    ),
  ]);
  const consent = fromItem(row.Item);
  return {
    phoneNumber: number,
    status: consent.status,
    source: consent.source,
    note: consent.note,
    evidence: evidenceOf(row.Item?.consentEvidence),
    updatedAt: consent.at,
    history: (page.Items ?? []).map(historyEntryOf),
  };
}

const historyEntryOf = (item: Item): ConsentHistoryEntry => ({
  status: item.status as ConsentHistoryEntry['status'],
  source: item.source as string,
  note: str(item.note),
  evidence: evidenceOf(item.evidence),
  at: item.at as string,
});

function evidenceOf(value: unknown): ConsentEvidence | null {
  if (!value || typeof value !== 'object') return null;
  const e = value as Record<string, unknown>;
  return {
    statement: e.statement as string,
    where: e.where as string,
    collectedAt: e.collectedAt as string,
    ...(typeof e.reference === 'string' && { reference: e.reference }),
  };
}
