/**
 * What one request consumed, line by line: a read or write of one item (or one Query or Scan
 * page) on a table, or the writes an item change caused in one index. The same lines drive the
 * meters, the throughput budgets and the ConsumedCapacity the engine answers with.
 */
export type ChargeLine = {
  table: string;
  /** The index the units belong to; undefined: the table itself. */
  index: string | undefined;
  /** The partition-key value (of the index for an index line); undefined for a Scan. */
  partitionKey: string | undefined;
  /** The item's primary key (table lines of item reads and writes only). */
  itemKey: string | undefined;
  readUnits: number;
  writeUnits: number;
};

export type Units = { readUnits: number; writeUnits: number };

export type TableUnits = Units & { indexes: Record<string, Units> };

const zero = (): Units => ({ readUnits: 0, writeUnits: 0 });

/** Units per table and per index of the table, in the order tables first appear. */
export function unitsByTable(lines: ChargeLine[]): Map<string, TableUnits> {
  const tables = new Map<string, TableUnits>();
  for (const line of lines) {
    const table = tables.get(line.table) ?? { ...zero(), indexes: {} };
    tables.set(line.table, table);
    const target = line.index === undefined ? table : (table.indexes[line.index] ??= zero());
    target.readUnits += line.readUnits;
    target.writeUnits += line.writeUnits;
  }
  return tables;
}

export const totalUnits = (units: TableUnits): Units => {
  const indexes = Object.values(units.indexes);
  return {
    readUnits: units.readUnits + indexes.reduce((sum, u) => sum + u.readUnits, 0),
    writeUnits: units.writeUnits + indexes.reduce((sum, u) => sum + u.writeUnits, 0),
  };
};

type CapacityFigure = { CapacityUnits: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };

function figure(units: Units): CapacityFigure {
  return {
    CapacityUnits: units.readUnits + units.writeUnits,
    ...(units.readUnits > 0 && { ReadCapacityUnits: units.readUnits }),
    ...(units.writeUnits > 0 && { WriteCapacityUnits: units.writeUnits }),
  };
}

/**
 * The ConsumedCapacity entries DynamoDB answers with: per table, the total (`TOTAL`), plus the
 * table's own and each index's share (`INDEXES`).
 */
export function consumedCapacity(lines: ChargeLine[], mode: 'TOTAL' | 'INDEXES'): Record<string, unknown>[] {
  const byTable = unitsByTable(lines);
  return [...byTable].map(([tableName, units]) => {
    const entry: Record<string, unknown> = { TableName: tableName, ...figure(totalUnits(units)) };
    if (mode === 'INDEXES') {
      entry.Table = figure(units);
      const indexes = Object.entries(units.indexes);
      if (indexes.length > 0)
        entry.GlobalSecondaryIndexes = Object.fromEntries(indexes.map(([name, u]) => [name, figure(u)]));
    }
    return entry;
  });
}
