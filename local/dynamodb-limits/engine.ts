import type { IncomingHttpHeaders } from 'node:http';
import { Budgets, type BudgetRates } from './budgets';
import type { ChargeLine } from './charges';
import { KnownImages, type WriteTarget } from './images-before';
import { ItemHolds } from './item-holds';
import type { WireItem } from './item-size';
import { Meters } from './meters';
import { ReplicaLag } from './replica-lag';
import { itemIdentity, keyOf, tableSchemaOf, type TableDescription, type TableSchema } from './table-schema';
import { Upstream, type UpstreamAnswer } from './upstream';

export type EngineSettings = {
  /** How long a TransactWriteItems holds its items before DynamoDB Local applies it. */
  transactionHoldMs: number;
  /**
   * Whether the upstream keeps one database for every caller (DynamoDB Local's -sharedDb) or one per access key and
   * region.
   */
  sharedDb: boolean;
  budgets: BudgetRates;
  /** Partition and item meters kept at most (beyond, units count in the totals only). */
  maxTrackedKeys: number;
  /** Requests kept in `recentRequests`. */
  recentRequests: number;
  /** How long an eventually consistent read may miss a write (replica-lag.ts); 0, the default, for none. */
  replicaLagMs: number;
  /**
   * Whether every write of the tables comes through this engine, so a write may be sized from the image the engine's
   * last write of its item left instead of reading it (images-before.ts). Off by default: with the local runtime's
   * `--dynamodb-limits`, the operator CLI writes to DynamoDB Local directly.
   */
  soleWriter: boolean;
  /**
   * With `soleWriter`: the tables held no item when the engine started, so an item it never wrote does not exist
   * (images-before.ts).
   */
  startedEmpty: boolean;
  /**
   * Read back every updated item a transaction's image was computed for (update-evaluation.ts) and fail the request if
   * they differ: the suite's engines check the evaluator on every transaction the tests run.
   */
  checkComputedImages: boolean;
  /** Images kept for `soleWriter`, the least recently used dropped first. */
  maxKnownImages: number;
};

/** The images of a write's held items before it runs, and which of them were taken as new rather than known or read. */
export type ImagesBefore = { images: (WireItem | undefined)[]; guessedNew: Set<number> };

/** A caller's DynamoDB request, parsed. */
export type CallerRequest = {
  operation: string;
  headers: IncomingHttpHeaders;
  /** The database the request reaches (see Engine.databaseOf). */
  database: string;
  // The request's JSON document: its shape depends on the operation, each handler reads what it needs.
  input: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  body: Buffer;
};

/**
 * What a handler answers: either DynamoDB Local's answer as it came (`raw`), or a JSON document
 * to send (`json`, whose ConsumedCapacity the engine sets from `lines`), and what was consumed.
 */
export type EngineAnswer = {
  status: number;
  raw?: UpstreamAnswer;
  json?: Record<string, unknown>;
  lines: ChargeLine[];
  /** Batch and transaction operations answer a list of ConsumedCapacity, one per table. */
  capacityList?: boolean;
  /** The error name the meters count (undefined on success). */
  error?: string;
};

/** The name the engine gives the database of a caller signing with `accessKeyId` in `region` (without -sharedDb). */
export const databaseName = (accessKeyId: string, region: string): string => `${accessKeyId}/${region}`;

/** Everything the operation handlers share: the upstream, the holds, the budgets, the meters, the tables' schemas. */
export class Engine {
  readonly upstream: Upstream;
  readonly holds = new ItemHolds();
  readonly budgets: Budgets;
  readonly meters: Meters;
  readonly replicaLag: ReplicaLag;
  private readonly knownImages: KnownImages | undefined;
  private readonly schemas = new Map<string, Promise<TableSchema | undefined>>();
  private readonly sleeps = new Set<() => void>();

  constructor(
    upstreamEndpoint: string,
    readonly settings: EngineSettings,
    now?: () => number,
  ) {
    this.upstream = new Upstream(upstreamEndpoint);
    this.budgets = new Budgets(settings.budgets, now);
    this.meters = new Meters(settings);
    this.replicaLag = new ReplicaLag(settings.replicaLagMs, now);
    this.knownImages = settings.soleWriter
      ? new KnownImages(settings.maxKnownImages, settings.startedEmpty)
      : undefined;
  }

  /**
   * The database a request reaches. DynamoDB Local without -sharedDb keeps one per access key and
   * region, both read from the request's credential scope (`Credential=<key>/<date>/<region>/...`).
   */
  databaseOf(headers: IncomingHttpHeaders): string {
    if (this.settings.sharedDb) return 'shared';
    const scope = /Credential=([^/,\s]+)\/[^/]+\/([^/]+)\//.exec(String(headers.authorization ?? ''));
    return scope ? databaseName(scope[1], scope[2]) : 'anonymous';
  }

  /**
   * A table's schema, read with the caller's credentials once per database; undefined when DynamoDB Local does not know
   * the table.
   */
  schema(request: CallerRequest, table: string): Promise<TableSchema | undefined> {
    const cacheKey = `${request.database}\u0001${table}`;
    let schema = this.schemas.get(cacheKey);
    if (!schema) {
      schema = this.upstream
        .call(request.headers, 'DescribeTable', { TableName: table })
        .then(async ({ status, json }) => {
          if (status !== 200 || !json?.Table) {
            this.schemas.delete(cacheKey); // not cached: the table may be created next
            return undefined;
          }
          const schema = tableSchemaOf(json.Table as TableDescription);
          if (this.knownImages) schema.ttlAttribute = await this.ttlAttributeOf(request, table);
          return schema;
        });
      this.schemas.set(cacheKey, schema);
    }
    return schema;
  }

  /** The table's TTL attribute while TTL is on (or being turned on). */
  private async ttlAttributeOf(request: CallerRequest, table: string): Promise<string | undefined> {
    const { status, json } = await this.upstream.call(request.headers, 'DescribeTimeToLive', { TableName: table });
    const ttl = (json?.TimeToLiveDescription ?? {}) as { TimeToLiveStatus?: string; AttributeName?: string };
    const on = ttl.TimeToLiveStatus === 'ENABLED' || ttl.TimeToLiveStatus === 'ENABLING';
    return status === 200 && on ? ttl.AttributeName : undefined;
  }

  /** After a change of a table's schema or TTL, its schema is read again (its items' images stay as they are). */
  forgetSchema(database: string, table: string): void {
    this.schemas.delete(`${database}\u0001${table}`);
  }

  /** A table deleted holds no item any more (one created again under its name starts empty). */
  tableDeleted(database: string, table: string): void {
    this.knownImages?.dropTable(`${database}\u0001${table}\u0001`);
  }

  /** An item's key for the holds, unique across databases and tables. */
  holdKey(request: CallerRequest, table: TableSchema, item: WireItem): string {
    return `${request.database}\u0001${table.name}\u0001${itemIdentity(table.key, item).key}`;
  }

  /**
   * The current items at `keys` (strongly consistent, as the write will see them), by item key.
   * One BatchGetItem per 100 keys, retried for any key DynamoDB Local leaves unprocessed.
   */
  async currentItems(request: CallerRequest, table: TableSchema, keys: WireItem[]): Promise<Map<string, WireItem>> {
    const found = new Map<string, WireItem>();
    for (let start = 0; start < keys.length; start += 100) {
      let pending: WireItem[] = keys.slice(start, start + 100).map((key) => keyOf(table.key, key));
      while (pending.length > 0) {
        const { status, json } = await this.upstream.call(request.headers, 'BatchGetItem', {
          RequestItems: { [table.name]: { Keys: pending, ConsistentRead: true } },
        });
        if (status !== 200 || !json)
          throw new Error(`DynamoDB Local refused the engine's read of ${table.name} (${status})`);
        for (const item of (json.Responses as Record<string, WireItem[]>)?.[table.name] ?? [])
          found.set(itemIdentity(table.key, item).key, item);
        pending = (json.UnprocessedKeys as Record<string, { Keys: WireItem[] }> | undefined)?.[table.name]?.Keys ?? [];
      }
    }
    return found;
  }

  /**
   * The current image of each target, in order (undefined for a missing item or an undefined
   * target, which is not read): one `currentItems` per table.
   */
  async imagesOf(
    request: CallerRequest,
    targets: ({ table: TableSchema; key: WireItem } | undefined)[],
  ): Promise<(WireItem | undefined)[]> {
    const images: (WireItem | undefined)[] = targets.map(() => undefined);
    const byTable = new Map<TableSchema, number[]>();
    targets.forEach((target, index) => {
      if (target) byTable.set(target.table, [...(byTable.get(target.table) ?? []), index]);
    });
    for (const [table, indexes] of byTable) {
      const found = await this.currentItems(
        request,
        table,
        indexes.map((index) => targets[index]!.key),
      );
      for (const index of indexes) images[index] = found.get(itemIdentity(table.key, targets[index]!.key).key);
    }
    return images;
  }

  /**
   * The images of the items a write holds, before it runs, in order (undefined target: none): known from the engine's
   * last write (`soleWriter`), else taken as absent for a write that requires a new item, else read (images-before.ts).
   * Call it only while the write holds every target.
   */
  async imagesBefore(request: CallerRequest, targets: (WriteTarget | undefined)[]): Promise<ImagesBefore> {
    const images: (WireItem | undefined)[] = targets.map(() => undefined);
    const guessedNew = new Set<number>();
    // Real time, as DynamoDB's TTL keeps it (the budgets' clock may be a test's).
    const nowSeconds = Date.now() / 1000;
    let known = 0;
    const unknown = targets.map((target, index) => {
      if (!target) return undefined;
      const image = this.knownImages?.get(
        this.holdKey(request, target.table, target.key),
        target.table.ttlAttribute,
        nowSeconds,
      );
      if (image !== undefined) {
        images[index] = image ?? undefined;
        known += 1;
        return undefined;
      }
      if (target.mustBeNew) {
        guessedNew.add(index);
        return undefined;
      }
      return target;
    });
    const read = unknown.some(Boolean) ? await this.imagesOf(request, unknown) : [];
    unknown.forEach((target, index) => {
      if (!target) return;
      images[index] = read[index];
      this.remember(request, target, read[index]);
    });
    const readCount = unknown.filter(Boolean).length;
    this.meters.countImages(request.database, 'imagesBeforeWrites', {
      read: readCount,
      known,
      guessedNew: guessedNew.size,
    });
    return { images, guessedNew };
  }

  /** The image a write through the engine left (or found, when refused), kept while the engine is the sole writer. */
  remember(request: CallerRequest, target: { table: TableSchema; key: WireItem }, image: WireItem | undefined): void {
    this.knownImages?.record(this.holdKey(request, target.table, target.key), image);
  }

  /** A write whose outcome the engine cannot know: the item's image is read again next time. */
  forgetImage(request: CallerRequest, target: { table: TableSchema; key: WireItem }): void {
    this.knownImages?.forget(this.holdKey(request, target.table, target.key));
  }

  /** Waits `ms`, or less if the engine stops meanwhile. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        done();
      };
      const timer = setTimeout(wake, ms);
      this.sleeps.add(wake);
    });
  }

  close(): void {
    for (const wake of [...this.sleeps]) wake();
    this.upstream.close();
  }
}
