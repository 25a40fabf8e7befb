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
} as const;

/** Epoch seconds after which DynamoDB removes the row (rate-limit windows, deliveries, idempotency). */
export const TTL_ATTRIBUTE = 'ttl';

export type GsiName = keyof typeof GSIS;
