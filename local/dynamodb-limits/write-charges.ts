import type { Draw } from './budgets';
import { failedConditionWriteUnits, indexWriteCharge, itemWriteUnits, type WriteMode } from './capacity';
import type { ChargeLine } from './charges';
import { itemBytes, type WireItem } from './item-size';
import { indexEntryOf, itemIdentity, type TableSchema } from './table-schema';

const bytesOf = (item: WireItem | undefined) => (item ? itemBytes(item) : undefined);

/**
 * What writing one item costs, line by line: the table's write of the larger image (doubled in a
 * transaction) and, per global secondary index, the puts and deletes of its entry, each in its
 * index partition (never doubled: indexes are updated after the commit).
 */
export function itemWriteLines(
  table: TableSchema,
  key: WireItem,
  before: WireItem | undefined,
  after: WireItem | undefined,
  mode: WriteMode,
): ChargeLine[] {
  const { partitionKey, key: itemKey } = itemIdentity(table.key, key);
  const lines: ChargeLine[] = [
    {
      table: table.name,
      index: undefined,
      partitionKey,
      itemKey,
      readUnits: 0,
      writeUnits: itemWriteUnits(bytesOf(before), bytesOf(after), mode),
    },
  ];
  for (const index of table.indexes) {
    for (const write of indexWriteCharge(indexEntryOf(table, index, before), indexEntryOf(table, index, after))
      .writes) {
      lines.push({
        table: table.name,
        index: index.name,
        partitionKey: write.partitionKey,
        itemKey: undefined,
        readUnits: 0,
        writeUnits: write.units,
      });
    }
  }
  return lines;
}

/**
 * A standard conditional write whose condition failed: the existing item's size (1 unit if none); indexes untouched.
 */
export function failedConditionLines(table: TableSchema, key: WireItem, before: WireItem | undefined): ChargeLine[] {
  const { partitionKey, key: itemKey } = itemIdentity(table.key, key);
  return [
    {
      table: table.name,
      index: undefined,
      partitionKey,
      itemKey,
      readUnits: 0,
      writeUnits: failedConditionWriteUnits(bytesOf(before)),
    },
  ];
}

/**
 * What an update is expected to do, before it runs: its current image with the index keys the
 * update sets or removes (update-prediction.ts); its other new attributes are not known yet.
 */
export class PredictedUpdate {
  constructor(readonly image: WireItem) {}
}

/**
 * What a write is expected to cost before it runs. The new image is known for a put (the item)
 * and a delete (none). For an update the estimate is the current image rewritten in place, and
 * in each index: the entry updated where it is, or, when the update moves it, deleted from its
 * index partition and put in the one it enters, so an index partition over budget refuses the
 * whole write before the table is touched.
 */
export function expectedWriteLines(
  table: TableSchema,
  key: WireItem,
  before: WireItem | undefined,
  after: WireItem | undefined | PredictedUpdate,
  mode: WriteMode,
): ChargeLine[] {
  if (!(after instanceof PredictedUpdate)) return itemWriteLines(table, key, before, after, mode);
  const [tableLine] = itemWriteLines(table, key, before, undefined, mode);
  const indexLines = table.indexes.flatMap((index): ChargeLine[] => {
    const entry = indexEntryOf(table, index, before);
    const predicted = indexEntryOf(table, index, after.image);
    // An entry staying where it is may still change (the engine cannot tell yet): one write of it.
    const charge =
      entry && predicted && entry.key === predicted.key
        ? indexWriteCharge(entry, { ...entry, content: '' })
        : indexWriteCharge(entry, predicted);
    return charge.writes.map((write) => ({
      table: table.name,
      index: index.name,
      partitionKey: write.partitionKey,
      itemKey: undefined,
      readUnits: 0,
      writeUnits: write.units,
    }));
  });
  return [tableLine, ...indexLines];
}

/** Lines as budget draws: the ARN a throttle names, and the request item they belong to. */
export function drawsOf(table: TableSchema, lines: ChargeLine[], itemIndex: number): Draw[] {
  return lines.map((line) => ({
    ...line,
    itemIndex,
    resource:
      line.index === undefined ? table.arn : (table.indexes.find((i) => i.name === line.index)?.arn ?? table.arn),
  }));
}
