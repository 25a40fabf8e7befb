import type { ChargeLine } from './charges';
import { TokenBuckets } from './token-buckets';
import { addReasons, type ThrottlingReason } from './wire-errors';

/** Units per second each budget allows; 0 turns one off. */
export type BudgetRates = {
  /** Writes per partition-key value of a table (DynamoDB: 1,000 write units per second per partition). */
  partitionWriteUnits: number;
  /** Writes per item. */
  itemWriteUnits: number;
  /** Index writes per partition-key value of a global secondary index (a hot index partition throttles the table's writes). */
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

type BucketTake = { buckets: TokenBuckets; key: string; units: number; reason: ThrottlingReason['reason'] };

/**
 * The throughput budgets of every database: token buckets per partition-key value, item and index
 * partition-key value, for writes and reads. A request reserves what it is expected to cost before
 * it runs (refused whole if any bucket lacks it) and settles its real cost after.
 */
export class Budgets {
  private readonly partitionWrite: TokenBuckets;
  private readonly itemWrite: TokenBuckets;
  private readonly indexWrite: TokenBuckets;
  private readonly partitionRead: TokenBuckets;
  private readonly itemRead: TokenBuckets;

  constructor(readonly rates: BudgetRates, now?: () => number) {
    this.partitionWrite = new TokenBuckets(rates.partitionWriteUnits, now);
    this.itemWrite = new TokenBuckets(rates.itemWriteUnits, now);
    this.indexWrite = new TokenBuckets(rates.indexPartitionWriteUnits, now);
    this.partitionRead = new TokenBuckets(rates.partitionReadUnits, now);
    this.itemRead = new TokenBuckets(rates.itemReadUnits, now);
  }

  /** The buckets one line draws from, keyed inside `database`. */
  private takesOf(database: string, line: ChargeLine): BucketTake[] {
    const takes: BucketTake[] = [];
    const owner = line.index === undefined ? `${database}\u0001${line.table}` : `${database}\u0001${line.table}\u0001${line.index}`;
    const on = line.index === undefined ? 'Table' : 'Index';
    if (line.writeUnits > 0) {
      if (line.partitionKey !== undefined) {
        const buckets = line.index === undefined ? this.partitionWrite : this.indexWrite;
        takes.push({ buckets, key: `${owner}\u0001${line.partitionKey}`, units: line.writeUnits, reason: `${on}WriteKeyRangeThroughputExceeded` });
      }
      if (line.itemKey !== undefined) takes.push({ buckets: this.itemWrite, key: `${owner}\u0001${line.itemKey}`, units: line.writeUnits, reason: `${on}WriteKeyRangeThroughputExceeded` });
    }
    if (line.readUnits > 0) {
      if (line.partitionKey !== undefined) takes.push({ buckets: this.partitionRead, key: `${owner}\u0001${line.partitionKey}`, units: line.readUnits, reason: `${on}ReadKeyRangeThroughputExceeded` });
      if (line.itemKey !== undefined) takes.push({ buckets: this.itemRead, key: `${owner}\u0001${line.itemKey}`, units: line.readUnits, reason: `${on}ReadKeyRangeThroughputExceeded` });
    }
    return takes;
  }

  /** Sums per bucket, so several items of one request in one partition count together. */
  private grouped(database: string, lines: ChargeLine[]): Map<TokenBuckets, Map<string, number>> {
    const groups = new Map<TokenBuckets, Map<string, number>>();
    for (const line of lines) {
      for (const take of this.takesOf(database, line)) {
        const keys = groups.get(take.buckets) ?? new Map<string, number>();
        groups.set(take.buckets, keys);
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
        if (take.buckets.admits(take.key, groups.get(take.buckets)!.get(take.key)!)) continue;
        const reason: ThrottlingReason = { reason: take.reason, resource: draw.resource };
        if (!refused.itemIndexes.has(draw.itemIndex)) refused.itemIndexes.set(draw.itemIndex, reason);
        addReasons(refused.reasons, [reason]);
      }
    }
    if (refused.itemIndexes.size > 0) return { refused };
    for (const [buckets, keys] of groups) for (const [key, units] of keys) buckets.take(key, units);
    return {
      reservation: {
        settle: (actual) => {
          const spent = this.grouped(database, actual);
          for (const buckets of new Set([...groups.keys(), ...spent.keys()])) {
            const reserved = groups.get(buckets) ?? new Map<string, number>();
            const real = spent.get(buckets) ?? new Map<string, number>();
            for (const key of new Set([...reserved.keys(), ...real.keys()])) buckets.take(key, (real.get(key) ?? 0) - (reserved.get(key) ?? 0));
          }
        },
      },
    };
  }

  /** Full buckets everywhere (a meter reset between measurements). */
  refill(): void {
    for (const buckets of [this.partitionWrite, this.itemWrite, this.indexWrite, this.partitionRead, this.itemRead]) buckets.clear();
  }
}
