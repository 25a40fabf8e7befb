/**
 * Which items are taken, and by what (DynamoDB Developer Guide, "Transaction conflict handling"):
 * - a transaction (TransactWriteItems) holds its items from its start to its commit; another
 *   transaction, a standard write (PutItem, UpdateItem, DeleteItem) or a transactional read of
 *   one of them is refused (a conflict), a BatchWriteItem leaves it unprocessed;
 * - a standard write holds its item while it runs; standard writes of one item queue behind each
 *   other (DynamoDB serializes them), a transaction waits for the item rather than fail (the
 *   transaction is serializable with each standard write), and a transactional read of it is
 *   refused (DynamoDB cancels a TransactGetItems on an item an ongoing write is writing);
 * - a transactional read (TransactGetItems) holds its items for its own window: a write that
 *   takes one of them meanwhile goes ahead and cancels the read (the guide's table read both ways
 *   in time, the stricter reading: docs/local-engine.md). Reads never hold each other back.
 * Nothing is held partially: a request that must wait holds none of its items meanwhile, so two
 * requests can never wait on each other.
 */
export type HoldKind = 'transaction' | 'write';

export type HoldResult = { conflicts: number[]; release: () => void };

/** A transactional read in its window: which of its items a write took meanwhile (their indexes in `keys`). */
export type ReadHold = { conflicts: () => number[]; release: () => void };

type Reader = { keys: string[]; conflicts: Set<number> };

export class ItemHolds {
  private readonly held = new Map<string, HoldKind>();
  private readonly waiters = new Map<string, (() => void)[]>();
  private readonly readers = new Map<string, Set<Reader>>();

  /** The kind of request holding the item for a write, if any. */
  holderOf(key: string): HoldKind | undefined {
    return this.held.get(key);
  }

  /** Items held now, by writes and by transactional reads. */
  get size(): number {
    return this.held.size + this.readers.size;
  }

  /**
   * Takes every key in `keys` for a request of `kind`, waiting for standard writes on them to end.
   * Keys held by a transaction are conflicts: for a transaction or a standard write nothing is
   * taken then (the caller refuses the request); `skipConflicts` (BatchWriteItem) takes the rest.
   * Taking a key cancels the transactional reads holding it.
   */
  async hold(keys: string[], kind: HoldKind, options: { skipConflicts?: boolean } = {}): Promise<HoldResult> {
    for (;;) {
      const conflicts = keys.flatMap((key, index) => (this.held.get(key) === 'transaction' ? [index] : []));
      if (conflicts.length > 0 && !options.skipConflicts) return { conflicts, release: () => {} };
      const wanted = keys.filter((_, index) => !conflicts.includes(index));
      const busy = wanted.find((key) => this.held.has(key));
      if (busy === undefined) {
        for (const key of wanted) {
          this.held.set(key, kind);
          this.cancelReadsOf(key);
        }
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          for (const key of wanted) this.free(key);
        };
        return { conflicts, release };
      }
      await new Promise<void>((wake) => this.waiters.set(busy, [...(this.waiters.get(busy) ?? []), wake]));
    }
  }

  /**
   * Holds `keys` for a transactional read until `release`. The caller refuses the read up front
   * when a write holds one of them (`holderOf`); a write taking one later marks it in `conflicts`.
   */
  read(keys: string[]): ReadHold {
    const reader: Reader = { keys, conflicts: new Set() };
    for (const key of keys) this.readers.set(key, (this.readers.get(key) ?? new Set()).add(reader));
    let released = false;
    return {
      conflicts: () => [...reader.conflicts].sort((a, b) => a - b),
      release: () => {
        if (released) return;
        released = true;
        for (const key of keys) {
          const readers = this.readers.get(key);
          readers?.delete(reader);
          if (readers?.size === 0) this.readers.delete(key);
        }
      },
    };
  }

  private cancelReadsOf(key: string): void {
    for (const reader of this.readers.get(key) ?? [])
      reader.keys.forEach((read, index) => read === key && reader.conflicts.add(index));
  }

  private free(key: string): void {
    this.held.delete(key);
    const waiting = this.waiters.get(key);
    this.waiters.delete(key);
    for (const wake of waiting ?? []) wake();
  }
}
