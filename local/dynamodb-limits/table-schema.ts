import { INDEX_ENTRY_OVERHEAD_BYTES, type IndexEntryImage } from './capacity';
import { itemBytes, type WireItem, type WireValue } from './item-size';

/**
 * What the engine needs to know of a table: its key and its global secondary indexes (key and
 * projection), read once per database and table from DescribeTable. Local secondary indexes
 * are not modelled (docs/local-engine.md).
 */
export type KeySchema = { partitionKey: string; sortKey: string | undefined };

export type IndexSchema = KeySchema & {
  name: string;
  arn: string;
  /** `undefined`: every attribute (ALL); otherwise the non-key attributes projected (none for KEYS_ONLY). */
  projected: Set<string> | undefined;
};

export type TableSchema = {
  name: string;
  arn: string;
  key: KeySchema;
  indexes: IndexSchema[];
  /** The TTL attribute, when the engine asked (images-before.ts): DynamoDB may delete an item once it has passed. */
  ttlAttribute?: string;
};

type KeyElement = { AttributeName: string; KeyType: 'HASH' | 'RANGE' };

type IndexDescription = {
  IndexName: string;
  IndexArn?: string;
  KeySchema: KeyElement[];
  Projection?: { ProjectionType?: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; NonKeyAttributes?: string[] };
};

export type TableDescription = {
  TableName: string;
  TableArn?: string;
  KeySchema: KeyElement[];
  GlobalSecondaryIndexes?: IndexDescription[];
};

const keySchemaOf = (elements: KeyElement[]): KeySchema => ({
  partitionKey: elements.find((e) => e.KeyType === 'HASH')!.AttributeName,
  sortKey: elements.find((e) => e.KeyType === 'RANGE')?.AttributeName,
});

function projectionOf(projection: IndexDescription['Projection']): Set<string> | undefined {
  const type = projection?.ProjectionType ?? 'ALL';
  if (type === 'ALL') return undefined;
  return new Set(type === 'INCLUDE' ? (projection?.NonKeyAttributes ?? []) : []);
}

export function tableSchemaOf(description: TableDescription): TableSchema {
  const arn = description.TableArn ?? `arn:aws:dynamodb:local:000000000000:table/${description.TableName}`;
  return {
    name: description.TableName,
    arn,
    key: keySchemaOf(description.KeySchema),
    indexes: (description.GlobalSecondaryIndexes ?? []).map((index) => ({
      name: index.IndexName,
      arn: index.IndexArn ?? `${arn}/index/${index.IndexName}`,
      ...keySchemaOf(index.KeySchema),
      projected: projectionOf(index.Projection),
    })),
  };
}

/**
 * A key attribute's value as a comparable string (`S:abc`, `N:12`, `B:...`); undefined when absent or not a key type.
 */
export function scalarText(value: WireValue | undefined): string | undefined {
  if (!value) return undefined;
  if ('S' in value) return `S:${value.S}`;
  if ('N' in value) return `N:${value.N}`;
  if ('B' in value) return `B:${value.B}`;
  return undefined;
}

/** The primary key of an item (or of a Key parameter) as a comparable string, and its partition-key value. */
export function itemIdentity(schema: KeySchema, item: WireItem): { key: string; partitionKey: string } {
  const partitionKey = scalarText(item[schema.partitionKey]) ?? '';
  const sortKey = schema.sortKey ? (scalarText(item[schema.sortKey]) ?? '') : undefined;
  return { partitionKey, key: sortKey === undefined ? partitionKey : `${partitionKey}\u0000${sortKey}` };
}

/** Only the key attributes of an item, as a Key parameter. */
export function keyOf(schema: KeySchema, item: WireItem): WireItem {
  const key: WireItem = { [schema.partitionKey]: item[schema.partitionKey] };
  if (schema.sortKey) key[schema.sortKey] = item[schema.sortKey];
  return key;
}

const SET_TYPES = new Set(['SS', 'NS', 'BS']);

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Object keys sorted at every level, and the members of string, number and binary sets (unordered in DynamoDB, which
 * may answer them in another order than they were written), so equal values print equal.
 */
export function canonicalText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => byText(a, b));
    return `{${entries
      .map(([k, v]) => {
        const members = SET_TYPES.has(k) && Array.isArray(v) ? [...(v as string[])].sort(byText) : v;
        return `${JSON.stringify(k)}:${canonicalText(members)}`;
      })
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The item's entry in an index, or undefined when the item is not in it (an index key attribute
 * missing or not a scalar: DynamoDB then writes nothing to the index). The entry holds the
 * table's key, the index's key and the projected attributes; its size adds the 100 bytes of
 * overhead DynamoDB counts per index entry.
 */
export function indexEntryOf(
  table: TableSchema,
  index: IndexSchema,
  item: WireItem | undefined,
): IndexEntryImage | undefined {
  if (!item) return undefined;
  const partitionKey = scalarText(item[index.partitionKey]);
  const sortKey = index.sortKey ? scalarText(item[index.sortKey]) : '';
  if (partitionKey === undefined || sortKey === undefined) return undefined;
  const keyNames = new Set(
    [table.key.partitionKey, table.key.sortKey, index.partitionKey, index.sortKey].filter((n): n is string => !!n),
  );
  const entry: WireItem = {};
  for (const [name, value] of Object.entries(item)) {
    if (keyNames.has(name) || !index.projected || index.projected.has(name)) entry[name] = value;
  }
  return {
    key: `${partitionKey}\u0000${sortKey}`,
    partitionKey,
    bytes: itemBytes(entry) + INDEX_ENTRY_OVERHEAD_BYTES,
    content: canonicalText(entry),
  };
}
