import { totalUnits, unitsByTable, type ChargeLine, type TableUnits, type Units } from './charges';
import type { ThrottlingReason } from './wire-errors';

/** Units and counts for one partition-key value or one item. */
export type KeyMeter = Units & { reads: number; writes: number };

/** One refused condition (./refusals.ts): the reason's code, and the shape of the key it was refused on. */
export type RefusedCondition = { reason: string; key: string };

/**
 * A site's refused requests (./refusals.ts): how many, and per condition (`<operation> <reason> <key shape>`, one
 * count per cancellation reason) how many times it failed.
 */
export type SiteRefusals = { requests: number; conditions: Record<string, number> };

export type ImagesBeforeWrites = { read: number; known: number; guessedNew: number };

export type ImagesAfterUpdates = { computed: number; read: number };

type ImageMeters = { imagesBeforeWrites: ImagesBeforeWrites; imagesAfterUpdates: ImagesAfterUpdates };

export type OperationMeter = Units & { requests: number; errors: Record<string, number> };

/** One request as the engine charged it (the newest `recentRequests` are kept). */
export type RequestRecord = {
  operation: string;
  status: number;
  error: string | undefined;
  tables: Record<string, TableUnits>;
};

/** What the engine counted since it started or was last reset; every figure is what AWS would charge. */
export type LimitsStats = {
  since: string;
  operations: Record<string, OperationMeter>;
  tables: Record<string, TableUnits>;
  /**
   * `<table> <value>` for a table's partition-key values, `<table>/<index> <value>` for an index's (values as `S:...`,
   * `N:...`).
   */
  partitions: Record<string, KeyMeter>;
  /** `<table> <partition value>[ <sort value>]`. */
  items: Record<string, KeyMeter>;
  /** Requests refused or cancelled because an item was held by an ongoing transaction or write, by operation. */
  conflicts: { total: number; byOperation: Record<string, number> };
  /** Requests (or, in a batch, items) refused for a throughput budget, by operation and by reason. */
  throttles: { total: number; byOperation: Record<string, number>; byReason: Record<string, number> };
  /**
   * Requests refused for a condition or a held item (a transaction's throttled items too), by the site they named (`-`: none): a failed
   * condition, a transaction's cancellation reasons, a standard write's conflict.
   */
  refusals: { total: number; bySite: Record<string, SiteRefusals> };
  /**
   * The items writes held, by how the engine learned their image before the write (images-before.ts): read from
   * DynamoDB Local (a call AWS does not make), known from the engine's last write of it, or taken as new from the
   * condition.
   */
  imagesBeforeWrites: ImagesBeforeWrites;
  /**
   * The items transactions updated, by how the engine learned their image after the commit: `computed` from the image
   * before and the update expression (update-evaluation.ts), or `read` back from DynamoDB Local.
   */
  imagesAfterUpdates: ImagesAfterUpdates;
  recentRequests: RequestRecord[];
  /** Key meters not kept because `maxTrackedKeys` was reached (their units still count in the totals). */
  untrackedKeys: number;
};

const emptyKeyMeter = (): KeyMeter => ({ readUnits: 0, writeUnits: 0, reads: 0, writes: 0 });

function emptyStats(): LimitsStats {
  return {
    since: new Date().toISOString(),
    operations: {},
    tables: {},
    partitions: {},
    items: {},
    conflicts: { total: 0, byOperation: {} },
    throttles: { total: 0, byOperation: {}, byReason: {} },
    refusals: { total: 0, bySite: {} },
    imagesBeforeWrites: { read: 0, known: 0, guessedNew: 0 },
    imagesAfterUpdates: { computed: 0, read: 0 },
    recentRequests: [],
    untrackedKeys: 0,
  };
}

const increment = (counts: Record<string, number>, key: string, by = 1) => (counts[key] = (counts[key] ?? 0) + by);

/** Strips the separators the engine uses inside keys, for readable meter names. */
const readable = (key: string) => key.split('\u0000').join(' ');

/** The meters of one scope: every database together, or one database. */
class MeterSet {
  private stats = emptyStats();
  private trackedKeys = 0;

  constructor(private readonly limits: { maxTrackedKeys: number; recentRequests: number }) {}

  private keyMeter(map: Record<string, KeyMeter>, key: string): KeyMeter | undefined {
    const existing = map[key];
    if (existing) return existing;
    if (this.trackedKeys >= this.limits.maxTrackedKeys) {
      this.stats.untrackedKeys += 1;
      return undefined;
    }
    this.trackedKeys += 1;
    return (map[key] = emptyKeyMeter());
  }

  request(operation: string, status: number, error: string | undefined, lines: ChargeLine[]): void {
    const byTable = unitsByTable(lines);
    const operationMeter = (this.stats.operations[operation] ??= {
      requests: 0,
      readUnits: 0,
      writeUnits: 0,
      errors: {},
    });
    operationMeter.requests += 1;
    if (error) increment(operationMeter.errors, error);
    for (const [table, units] of byTable) {
      const total = totalUnits(units);
      operationMeter.readUnits += total.readUnits;
      operationMeter.writeUnits += total.writeUnits;
      const tableMeter = (this.stats.tables[table] ??= { readUnits: 0, writeUnits: 0, indexes: {} });
      tableMeter.readUnits += units.readUnits;
      tableMeter.writeUnits += units.writeUnits;
      for (const [index, u] of Object.entries(units.indexes)) {
        const indexMeter = (tableMeter.indexes[index] ??= { readUnits: 0, writeUnits: 0 });
        indexMeter.readUnits += u.readUnits;
        indexMeter.writeUnits += u.writeUnits;
      }
    }
    for (const line of lines) this.keyLine(line);
    const recent = this.stats.recentRequests;
    recent.push({ operation, status, error, tables: Object.fromEntries(byTable) });
    if (recent.length > this.limits.recentRequests) recent.splice(0, recent.length - this.limits.recentRequests);
  }

  private keyLine(line: ChargeLine): void {
    const add = (meter: KeyMeter | undefined) => {
      if (!meter) return;
      meter.readUnits += line.readUnits;
      meter.writeUnits += line.writeUnits;
      if (line.readUnits > 0) meter.reads += 1;
      if (line.writeUnits > 0) meter.writes += 1;
    };
    if (line.partitionKey !== undefined) {
      const owner = line.index === undefined ? line.table : `${line.table}/${line.index}`;
      add(this.keyMeter(this.stats.partitions, `${owner} ${readable(line.partitionKey)}`));
    }
    if (line.itemKey !== undefined) add(this.keyMeter(this.stats.items, `${line.table} ${readable(line.itemKey)}`));
  }

  conflict(operation: string): void {
    this.stats.conflicts.total += 1;
    increment(this.stats.conflicts.byOperation, operation);
  }

  throttle(operation: string, reasons: ThrottlingReason[], count = 1): void {
    this.stats.throttles.total += count;
    increment(this.stats.throttles.byOperation, operation, count);
    for (const reason of new Set(reasons.map((r) => r.reason))) increment(this.stats.throttles.byReason, reason, count);
  }

  refused(site: string, operation: string, conditions: RefusedCondition[]): void {
    this.stats.refusals.total += 1;
    const meter = (this.stats.refusals.bySite[site] ??= { requests: 0, conditions: {} });
    meter.requests += 1;
    for (const { reason, key } of conditions) increment(meter.conditions, `${operation} ${reason} ${key}`);
  }

  countImages<K extends keyof ImageMeters>(meter: K, counts: ImageMeters[K]): void {
    const into = this.stats[meter] as Record<string, number>;
    for (const [name, count] of Object.entries(counts)) into[name] += count;
  }

  snapshot(): LimitsStats {
    return structuredClone(this.stats);
  }

  reset(): void {
    this.stats = emptyStats();
    this.trackedKeys = 0;
  }
}

/**
 * What the engine counted: over every database, and, when the upstream keeps a database per
 * caller (the integration tests give each test file its own), per database too, so a test can
 * read the conflicts and throttles of its own requests while other files run on the same engine.
 */
export class Meters {
  private readonly all: MeterSet;
  private readonly databases = new Map<string, MeterSet>();

  constructor(private readonly limits: { maxTrackedKeys: number; recentRequests: number; sharedDb: boolean }) {
    this.all = new MeterSet(limits);
  }

  /** The sets a request of `database` counts in. */
  private setsOf(database: string): MeterSet[] {
    if (this.limits.sharedDb) return [this.all];
    let set = this.databases.get(database);
    if (!set) this.databases.set(database, (set = new MeterSet(this.limits)));
    return [this.all, set];
  }

  request(database: string, operation: string, status: number, error: string | undefined, lines: ChargeLine[]): void {
    for (const set of this.setsOf(database)) set.request(operation, status, error, lines);
  }

  conflict(database: string, operation: string): void {
    for (const set of this.setsOf(database)) set.conflict(operation);
  }

  throttle(database: string, operation: string, reasons: ThrottlingReason[], count = 1): void {
    for (const set of this.setsOf(database)) set.throttle(operation, reasons, count);
  }

  /** A request refused at `site` for `conditions` (./refusals.ts). */
  refused(database: string, site: string, operation: string, conditions: RefusedCondition[]): void {
    for (const set of this.setsOf(database)) set.refused(site, operation, conditions);
  }

  /**
   * How the items of a write got their images: before it (`imagesBeforeWrites`, images-before.ts) or, for a
   * transaction's updates, after it (`imagesAfterUpdates`, update-evaluation.ts).
   */
  countImages<K extends keyof ImageMeters>(database: string, meter: K, counts: ImageMeters[K]): void {
    for (const set of this.setsOf(database)) set.countImages(meter, counts);
  }

  /** Everything counted, or (with `database`) what that database's requests counted: empty for one that made none. */
  snapshot(database?: string): LimitsStats {
    if (database === undefined || this.limits.sharedDb) return this.all.snapshot();
    return (this.databases.get(database) ?? new MeterSet(this.limits)).snapshot();
  }

  reset(): void {
    this.all.reset();
    this.databases.clear();
  }
}
