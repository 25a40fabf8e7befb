import type { WireItem } from './item-size';

/**
 * AWS's eventual consistency (docs/local-engine.md, "Eventual consistency"): DynamoDB answers an
 * eventually consistent read (`GetItem`, `BatchGetItem`, `Query`, `Scan` without `ConsistentRead`, and
 * every global secondary index query) from a replica that may not have the last second's writes
 * yet. With a lag of `lagMs`, such a read sees each item as it was `lagMs` ago: the image before the
 * first write of the item since then (nothing, for an item created since). Strongly consistent
 * reads, transactions and writes see the table as it is. DynamoDB Local has no replicas, so the
 * engine keeps, per item, the images its recent writes replaced.
 */

type Write = { at: number; before: WireItem | undefined };

export class ReplicaLag {
  private readonly writes = new Map<string, Write[]>();

  constructor(
    readonly lagMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get on(): boolean {
    return this.lagMs > 0;
  }

  /** A write of `key` replaced `before` (undefined: it created the item). */
  wrote(key: string, before: WireItem | undefined): void {
    const list = this.recent(key) ?? [];
    list.push({ at: this.now(), before });
    this.writes.set(key, list);
  }

  /** What a lagging replica holds for `key`: `{ image }` when a write since `lagMs` ago is not on it yet. */
  lagging(key: string): { image: WireItem | undefined } | undefined {
    const list = this.recent(key);
    return list ? { image: list[0].before } : undefined;
  }

  private recent(key: string): Write[] | undefined {
    const list = this.writes.get(key);
    if (!list) return undefined;
    const since = this.now() - this.lagMs;
    while (list.length > 0 && list[0].at <= since) list.shift();
    if (list.length > 0) return list;
    this.writes.delete(key);
    return undefined;
  }
}
