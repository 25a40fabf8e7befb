/**
 * Capacity units as DynamoDB charges them (DynamoDB Developer Guide: "Capacity unit consumption",
 * "Read and write operations", "Capacity management for transactions", and "Global secondary
 * indexes: write capacity units"). Pure arithmetic on item sizes in bytes; the proxy feeds it.
 */

export const READ_BLOCK_BYTES = 4096;
export const WRITE_BLOCK_BYTES = 1024;

/**
 * What an index entry weighs beyond its attributes (DynamoDB Developer Guide, "Global secondary
 * indexes": the size of an index entry is its keys and projected attributes plus 100 bytes of
 * overhead). The guide states it for storage and for the writes an index entry costs; the engine
 * counts it wherever an entry is charged (the stricter reading, docs/local-engine.md).
 */
export const INDEX_ENTRY_OVERHEAD_BYTES = 100;

/** How a read is served: eventually consistent (0.5 unit per 4 KB), strongly (1) or transactionally (2). */
export type ReadMode = 'eventual' | 'strong' | 'transactional';

const READ_UNITS_PER_BLOCK: Record<ReadMode, number> = { eventual: 0.5, strong: 1, transactional: 2 };

/** Writes are 1 unit per 1 KB, transactional writes 2 (one to prepare, one to commit). */
export type WriteMode = 'standard' | 'transactional';

const WRITE_UNITS_PER_BLOCK: Record<WriteMode, number> = { standard: 1, transactional: 2 };

const blocks = (bytes: number, blockBytes: number): number => Math.max(1, Math.ceil(bytes / blockBytes));

/**
 * One item read by its key (GetItem, each key of a BatchGetItem, each Get of a
 * TransactGetItems): its size rounded up to 4 KB; a key that finds nothing costs one block all the same.
 */
export function keyReadUnits(itemBytes: number | undefined, mode: ReadMode): number {
  return blocks(itemBytes ?? 0, READ_BLOCK_BYTES) * READ_UNITS_PER_BLOCK[mode];
}

/**
 * A Query or Scan page: the items it examined (filtered-out ones included) summed, then rounded
 * up to 4 KB once; a page that examined nothing still costs one block.
 */
export function pageReadUnits(examinedBytes: number, mode: Exclude<ReadMode, 'transactional'>): number {
  return blocks(examinedBytes, READ_BLOCK_BYTES) * READ_UNITS_PER_BLOCK[mode];
}

/**
 * A write of one item (PutItem, UpdateItem, DeleteItem, each request of a BatchWriteItem, each
 * action of a TransactWriteItems): the larger of the item before and after, rounded up to 1 KB.
 * A missing item on both sides (deleting nothing) is one block.
 */
export function itemWriteUnits(
  beforeBytes: number | undefined,
  afterBytes: number | undefined,
  mode: WriteMode,
): number {
  return blocks(Math.max(beforeBytes ?? 0, afterBytes ?? 0), WRITE_BLOCK_BYTES) * WRITE_UNITS_PER_BLOCK[mode];
}

/** A conditional write whose condition failed: the existing item's size, or 1 unit when there is none. */
export function failedConditionWriteUnits(existingBytes: number | undefined): number {
  return blocks(existingBytes ?? 0, WRITE_BLOCK_BYTES);
}

/** An item's entry in one global secondary index, before or after a write. */
export type IndexEntryImage = {
  /** The index's key of the entry (partition and sort key values), as a comparable string. */
  key: string;
  /** The entry's partition-key value, as a comparable string. */
  partitionKey: string;
  /** The entry's size: table keys, index keys and projected attributes, plus INDEX_ENTRY_OVERHEAD_BYTES. */
  bytes: number;
  /** The entry's content, canonical, to tell whether a projected attribute changed. */
  content: string;
};

/** What one item write does to one index: a put and/or a delete, each in its index partition. */
export type IndexWriteCharge = { units: number; writes: { partitionKey: string; units: number }[] };

/**
 * Index writes for one item change (DynamoDB Developer Guide, "Global secondary indexes: write
 * capacity units"): entering the index is 1 write (put), leaving it 1 (delete), changing its index
 * key 2 (delete the old entry, put the new), changing only projected attributes 1; an entry that
 * does not change costs nothing. Each write is rounded up to 1 KB of the entry it writes.
 * Index writes follow the table write after the commit, so a transaction does not double them.
 */
export function indexWriteCharge(
  before: IndexEntryImage | undefined,
  after: IndexEntryImage | undefined,
): IndexWriteCharge {
  const writes: { partitionKey: string; units: number }[] = [];
  if (before && after && before.key === after.key) {
    if (before.content !== after.content)
      writes.push({
        partitionKey: after.partitionKey,
        units: blocks(Math.max(before.bytes, after.bytes), WRITE_BLOCK_BYTES),
      });
  } else {
    if (before) writes.push({ partitionKey: before.partitionKey, units: blocks(before.bytes, WRITE_BLOCK_BYTES) });
    if (after) writes.push({ partitionKey: after.partitionKey, units: blocks(after.bytes, WRITE_BLOCK_BYTES) });
  }
  return { units: writes.reduce((sum, write) => sum + write.units, 0), writes };
}
