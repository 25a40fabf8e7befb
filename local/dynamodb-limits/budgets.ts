import type { ChargeLine } from './charges';
import { SecondWindows, type WindowTake } from './second-windows';
import { addReasons, type ThrottlingReason } from './wire-errors';

/**
 * Units per second each budget allows; 0 turns one off. A key's reads and writes share one
 * budget (DynamoDB: 3,000 read units or 1,000 write units a second per partition, or a linear
 * combination), so each pair below is one budget: a write unit costs what `read / write` read units do.
 */
export type BudgetRates = {
  /** Writes per partition-key value of a table (DynamoDB: 1,000 write units per second per partition). */
  partitionWriteUnits: number;
  /** Writes per item. */
  itemWriteUnits: number;
  /**
   * Index writes per partition-key value of a global secondary index (a hot index partition throttles the table's
   * writes).
   */
  indexPartitionWriteUnits: number;
  /** Reads per partition-key value, of a table or an index (DynamoDB: 3,000 read units per second per partition). */
  partitionReadUnits: number;
  /** Reads per item. */
  itemReadUnits: number;
};

/** An expected charge of a request, with the ARN a throttle names and which item of the request it is. */
export type Draw = ChargeLine & { resource: string; itemIndex: number };

/** The request items a budget refused (each with the first reason found for it), and every distinct reason. */
export type Refusal = { itemIndexes: Map<number, ThrottlingReason>; reasons: ThrottlingReason[] };

export type Reservation = {
  /** Replaces what was reserved by what the request really cost. */
  settle: (actual: ChargeLine[]) => void;
};

/**
 * One shared budget of reads and writes: a window per key whose capacity is a second's read
 * units (or write units when reads are off), a read unit costing 1 and a write unit what
 * `capacity / writeUnits` read units do (3 at DynamoDB's rates).
 */
type SharedBudget = { windows: SecondWindows; readCost: number; writeCost: number };

function sharedBudget(readUnits: number, writeUnits: number, now?: () => number): SharedBudget {
  const capacity = readUnits > 0 ? readUnits : writeUnits;
  return {
    windows: new SecondWindows(capacity, now),
    readCost: readUnits > 0 ? 1 : 0,
    writeCost: writeUnits > 0 ? capacity / writeUnits : 0,
  };
}

type BudgetTake = { windows: SecondWindows; key: string; units: number; reason: ThrottlingReason['reason'] };

/**
 * The throughput budgets of every database: one per partition-key value, item and index
 * partition-key value, each shared by reads and writes, each a one-second window
 * (second-windows.ts). A request reserves what it is expected to cost before it runs (refused
 * whole if any budget lacks room) and settles its real cost after.
 */
export class Budgets {
  private readonly partition: SharedBudget;
  private readonly item: SharedBudget;
  private readonly indexPartition: SharedBudget;

  constructor(
    readonly rates: BudgetRates,
    now?: () => number,
  ) {
    this.partition = sharedBudget(rates.partitionReadUnits, rates.partitionWriteUnits, now);
    this.item = sharedBudget(rates.itemReadUnits, rates.itemWriteUnits, now);
    this.indexPartition = sharedBudget(rates.partitionReadUnits, rates.indexPartitionWriteUnits, now);
  }

  /** The budgets one line draws on, keyed inside `database`, with what it costs each. */
  private takesOf(database: string, line: ChargeLine): BudgetTake[] {
    const owner =
      line.index === undefined ? `${database}\u0001${line.table}` : `${database}\u0001${line.table}\u0001${line.index}`;
    const reason: ThrottlingReason['reason'] = `${line.index === undefined ? 'Table' : 'Index'}${line.writeUnits > 0 ? 'Write' : 'Read'}KeyRangeThroughputExceeded`;
    const drawn: [SharedBudget, string][] = [];
    if (line.partitionKey !== undefined)
      drawn.push([
        line.index === undefined ? this.partition : this.indexPartition,
        `${owner}\u0001${line.partitionKey}`,
      ]);
    if (line.itemKey !== undefined) drawn.push([this.item, `${owner}\u0001${line.itemKey}`]);
    return drawn.flatMap(([budget, key]) => {
      const units = line.readUnits * budget.readCost + line.writeUnits * budget.writeCost;
      return budget.windows.enabled && units > 0 ? [{ windows: budget.windows, key, units, reason }] : [];
    });
  }

  /** Sums per budget and key, so several items of one request in one partition count together. */
  private grouped(database: string, lines: ChargeLine[]): Map<SecondWindows, Map<string, number>> {
    const groups = new Map<SecondWindows, Map<string, number>>();
    for (const line of lines) {
      for (const take of this.takesOf(database, line)) {
        const keys = groups.get(take.windows) ?? new Map<string, number>();
        groups.set(take.windows, keys);
        keys.set(take.key, (keys.get(take.key) ?? 0) + take.units);
      }
    }
    return groups;
  }

  /** Reserves `draws`, or says which items a budget refuses and why (nothing is taken then). */
  reserve(database: string, draws: Draw[]): { refused: Refusal } | { reservation: Reservation } {
    const groups = this.grouped(database, draws);
    const refused: Refusal = { itemIndexes: new Map(), reasons: [] };
    for (const draw of draws) {
      for (const take of this.takesOf(database, draw)) {
        if (take.windows.admits(take.key, groups.get(take.windows)!.get(take.key)!)) continue;
        const reason: ThrottlingReason = { reason: take.reason, resource: draw.resource };
        if (!refused.itemIndexes.has(draw.itemIndex)) refused.itemIndexes.set(draw.itemIndex, reason);
        addReasons(refused.reasons, [reason]);
      }
    }
    if (refused.itemIndexes.size > 0) return { refused };
    const taken = new Map<SecondWindows, Map<string, WindowTake | undefined>>();
    for (const [windows, keys] of groups)
      taken.set(windows, new Map([...keys].map(([key, units]) => [key, windows.take(key, units)])));
    return {
      reservation: {
        settle: (actual) => {
          const spent = this.grouped(database, actual);
          for (const windows of new Set([...taken.keys(), ...spent.keys()])) {
            const reserved = taken.get(windows) ?? new Map<string, WindowTake | undefined>();
            const real = spent.get(windows) ?? new Map<string, number>();
            for (const key of new Set([...reserved.keys(), ...real.keys()]))
              windows.settle(key, reserved.get(key), real.get(key) ?? 0);
          }
        },
      },
    };
  }

  /** Empty windows everywhere (a meter reset between measurements). */
  refill(): void {
    for (const budget of [this.partition, this.item, this.indexPartition]) budget.windows.clear();
  }
}
