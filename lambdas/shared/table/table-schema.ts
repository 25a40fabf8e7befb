/**
 * The single table's key schema, defined once. The CDK table construct and the local runtime's
 * table creation both read this, so the deployed table and DynamoDB Local can never drift apart.
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

export const GSIS = {
  /** Alternate listings: calls by direction, named contacts (sparse), API keys by id. */
  gsi1: { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  /** Secondary orderings: threads by last activity (texts). */
  gsi2: { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  /**
   * The directory: every contact of an organization, newest first (`T#<tenant>#CONTACTS` /
   * `CONTACT#<id>`). Contacts have partitions of their own, so the list is an index.
   */
  directory: { indexName: 'directory', partitionKey: 'directorypk', sortKey: 'directorysk' },
  /**
   * Contacts and their tombstones by their last change, oldest first (`T#<tenant>#CONTACT_CHANGES` /
   * the change's UUIDv7): `GET /contacts?updatedSince=`.
   */
  changes: { indexName: 'changes', partitionKey: 'changespk', sortKey: 'changessk' },
  /** A contact by its external id (`T#<tenant>#EXTERNAL_ID#<id>` / `CONTACT`): `GET /contacts?externalId=`. */
  externalIds: { indexName: 'externalIds', partitionKey: 'externalidpk', sortKey: 'externalidsk' },
} as const;

/** Epoch seconds after which DynamoDB removes the row (rate-limit windows, deliveries, idempotency). */
export const TTL_ATTRIBUTE = 'ttl';

export type GsiName = keyof typeof GSIS;
