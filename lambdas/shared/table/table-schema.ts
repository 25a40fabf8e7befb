/**
 * The single table's key schema, defined once. The CDK table construct and the local runtime's
 * table creation both read this, so the deployed table and DynamoDB Local can never drift apart.
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

/**
 * What an index holds besides the keys (the table's and its own): every attribute (`ALL`), or
 * only the named ones (`INCLUDE`). An index write costs a unit per KB of the entry, and an
 * update that changes no projected attribute writes nothing to the index.
 */
export type GsiProjection = { type: 'ALL' } | { type: 'INCLUDE'; attributes: readonly string[] };

/**
 * The attributes gsi2 carries besides the keys: the row's id and organization, which the settlement
 * sweep needs of an unsettled text. Nothing that changes after the row is written: an entry is put
 * when its row takes its place in an ordering and deleted when it leaves, and never rewritten in
 * between (a text's status changes, a delivery's claims and attempts), so it is one write unit of
 * a few hundred bytes whatever the row holds (a delivery's body, a text's body, a thread's last
 * message). The lists read their rows by key (one BatchGetItem per page).
 */
export const GSI2_ATTRIBUTES = ['id', 'tenantId'] as const;

export const GSIS = {
  /** Alternate listings: calls by direction, named contacts (sparse), conversations, lookups by bare id. */
  gsi1: { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: { type: 'ALL' } },
  /**
   * Narrow entries for orderings written with every text or delivery: an endpoint's delivery log
   * (`T#<org>#DELIVERIES#<endpoint>`), an organization's threads by last activity
   * (`T#<org>#THREADS`) and the settlement worklist (`UNSETTLED#<shard>`). A page reads its rows
   * by key. docs/capacity.md has what each costs per text and per delivery.
   */
  gsi2: {
    indexName: 'gsi2',
    partitionKey: 'gsi2pk',
    sortKey: 'gsi2sk',
    projection: { type: 'INCLUDE', attributes: GSI2_ATTRIBUTES },
  },
  /** The operator's listings, whole rows: organizations, an organization's API keys. */
  gsi3: { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: { type: 'ALL' } },
  /**
   * The directory: every contact of an organization, newest first (`T#<tenant>#CONTACTS` /
   * `CONTACT#<id>`). Contacts have partitions of their own, so the list is an index.
   */
  directory: {
    indexName: 'directory',
    partitionKey: 'directorypk',
    sortKey: 'directorysk',
    projection: { type: 'ALL' },
  },
  /**
   * Contacts and their tombstones by their last change, oldest first (`T#<tenant>#CONTACT_CHANGES` /
   * the change's UUIDv7): `GET /contacts?updatedSince=`.
   */
  changes: { indexName: 'changes', partitionKey: 'changespk', sortKey: 'changessk', projection: { type: 'ALL' } },
  /** A contact by its external id (`T#<tenant>#EXTERNAL_ID#<id>` / `CONTACT`): `GET /contacts?externalId=`. */
  externalIds: {
    indexName: 'externalIds',
    partitionKey: 'externalidpk',
    sortKey: 'externalidsk',
    projection: { type: 'ALL' },
  },
} as const satisfies Record<
  string,
  { indexName: string; partitionKey: string; sortKey: string; projection: GsiProjection }
>;

/** Epoch seconds after which DynamoDB removes the row (rate-limit windows, deliveries, idempotency). */
export const TTL_ATTRIBUTE = 'ttl';

export type GsiName = keyof typeof GSIS;

/** An index's projection as DynamoDB's CreateTable takes it. */
export function projectionOf(
  projection: GsiProjection,
): { ProjectionType: 'ALL' } | { ProjectionType: 'INCLUDE'; NonKeyAttributes: string[] } {
  return projection.type === 'ALL'
    ? { ProjectionType: 'ALL' }
    : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...projection.attributes] };
}
