import type { TransactItem } from '../../shared/table/dynamo';
import { createHash } from 'node:crypto';
import { TABLE_NAME } from '../../shared/aws';
import type { Item } from '../../shared/table/dynamo';
import { PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { searchIndexOf, type SearchFields } from './search-terms';

/**
 * The search index's rows: one key-only row per (entry, contact), `T#<tenant>#SEARCH#<token>` /
 * `CONTACT#<id>`, so one entry's contacts are one partition in id order (newest first, like the
 * list) and a cursor is a position in it. Every write of a contact that changes its entries
 * carries their changes in its own transaction, guarded on the fingerprint of the entries the
 * stored contact row says it has (`searchIndex`), so concurrent writers can never leave an
 * entry behind or miss one.
 */
export const SEARCH_INDEX_ATTRIBUTE = 'searchIndex';

export const searchPk = (tenantId: string, token: string): string =>
  tenantScopedPk(tenantId, PREFIX.contactSearch, token);

export const searchRowKey = (tenantId: string, token: string, contactId: string) => ({
  pk: searchPk(tenantId, token),
  sk: `${PREFIX.contact}${contactId}`,
});

/** A short digest of a set of entries, stored on the contact row. */
export const fingerprintOf = (tokens: readonly string[]): string =>
  createHash('sha256')
    .update([...tokens].sort().join(' '))
    .digest('base64url')
    .slice(0, 16);

/** The entries a contact's search rows hold: none (fingerprint null) for a contact not yet stored. */
export type IndexedEntries = { tokens: string[]; fingerprint: string | null };

export const indexedEntriesOf = (row: Item, fields: SearchFields): IndexedEntries => ({
  tokens: searchIndexOf(fields).tokens,
  fingerprint: row[SEARCH_INDEX_ATTRIBUTE] as string,
});

/** What a write of a contact does to its search rows. */
export type Reindex = {
  /** Puts of new entries and Deletes of dropped ones, for the contact's transaction. */
  writes: TransactItem[];
  /** The fingerprint to store on the contact row with them. */
  fingerprint: string;
  /** Whether anything changes (a new contact always does). */
  changed: boolean;
  /** The condition on the contact row: it still holds the entries `was` describes. */
  guard: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
};

export function reindex(tenantId: string, contactId: string, was: IndexedEntries, next: SearchFields): Reindex {
  const nextTokens = searchIndexOf(next).tokens;
  const [before, after] = [new Set(was.tokens), new Set(nextTokens)];
  const fingerprint = fingerprintOf(nextTokens);
  const writes: TransactItem[] = [
    ...was.tokens
      .filter((t) => !after.has(t))
      .map((t) => ({ Delete: { TableName: TABLE_NAME, Key: searchRowKey(tenantId, t, contactId) } })),
    ...nextTokens
      .filter((t) => !before.has(t))
      .map((t) => ({ Put: { TableName: TABLE_NAME, Item: searchRowKey(tenantId, t, contactId) } })),
  ];
  const names = { '#searchIndex': SEARCH_INDEX_ATTRIBUTE };
  const guard =
    was.fingerprint === null
      ? { expression: 'attribute_not_exists(#searchIndex)', names, values: {} }
      : { expression: '#searchIndex = :searchIndexWas', names, values: { ':searchIndexWas': was.fingerprint } };
  return { writes, fingerprint, changed: was.fingerprint !== fingerprint, guard };
}

/** The Puts that file a new contact under all its entries. */
export const insertIndex = (tenantId: string, contactId: string, fields: SearchFields): Reindex =>
  reindex(tenantId, contactId, { tokens: [], fingerprint: null }, fields);
