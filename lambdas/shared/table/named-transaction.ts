import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo } from '../aws';
import { isContention } from './contention';
import { atSite } from './round-site';

/** One item of a TransactWriteItems request (a Put, Update, Delete or ConditionCheck); dynamo.ts re-exports it. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type Item = Record<string, unknown>;

/**
 * Transactions whose items have names, so a refusal is read by name: DynamoDB answers a cancelled
 * transaction with one reason per item, in order, and an index computed by hand blames the wrong
 * row as soon as someone adds an item before it. This is the one place that reads those reasons.
 *
 *     const tx = new NamedTransaction<'claim' | 'row'>().add('claim', claimPut).add('row', rowPut);
 *     const refusal = await tx.write();        // undefined: committed
 *     if (refusal?.failed('claim')) return holderOf(refusal.failed('claim')?.item);
 */

/** An item whose condition failed: the row as it stood when the write asked for `ALL_OLD`. */
export type FailedItem = { item?: Item };

/** Items under names, in order; an undefined entry (an optional write left out) adds nothing. */
export type NamedItems<N extends string = string> = { readonly [name in N]?: TransactItem | readonly TransactItem[] };

type Reason = { code: string; item?: Item };

const CONDITION_FAILED = 'ConditionalCheckFailed';

/** A cancelled transaction, read by the names its items were given. */
export class Refusal<N extends string = string> {
  /** True when nothing failed a condition: another transaction held an item, or one was throttled. */
  readonly contention: boolean;

  constructor(
    private readonly reasonsByName: ReadonlyMap<string, readonly Reason[]>,
    /** The refusal as DynamoDB threw it, for a caller that rethrows what it does not expect. */
    readonly error: unknown,
  ) {
    this.contention = isContention(error);
  }

  /** The item's failure when an item under `name` failed its condition (the first such), else undefined. */
  failed(name: N): FailedItem | undefined {
    const reason = this.reasonsByName.get(name)?.find((r) => r.code === CONDITION_FAILED);
    return reason && { item: reason.item };
  }

  /** The names whose conditions failed, in the order they were added. */
  get failedNames(): N[] {
    return ([...this.reasonsByName.keys()] as N[]).filter((name) => this.failed(name) !== undefined);
  }

  /** DynamoDB's codes in item order (`ConditionalCheckFailed, None, ...`), for an error message. */
  get codes(): string {
    return [...this.reasonsByName.values()]
      .flat()
      .map((r) => r.code)
      .join(', ');
  }
}

/** Builds a TransactWriteItems request item by item, each under a name, and sends it. */
export class NamedTransaction<N extends string = string> {
  private readonly named: { name: N; items: TransactItem[] }[] = [];

  /**
   * `site` names where the transaction is written (./round-site.ts), for the engine's meters; without it, the
   * site of the round under way. Its caller counts a refusal it reads as a lost race (./rounds-lost.ts).
   */
  constructor(private readonly site?: string) {}

  /**
   * Adds items under `name` (several when nobody asks which of them failed, such as a group of search rows;
   * none when an optional write is left out). A name is added once: two parts must not share a blame.
   */
  add(name: N, ...items: (TransactItem | undefined)[]): this {
    if (this.named.some((entry) => entry.name === name)) throw new Error(`NamedTransaction: "${name}" added twice`);
    this.named.push({ name, items: items.filter((item): item is TransactItem => item !== undefined) });
    return this;
  }

  /** Adds each entry of `items` under its key, in the record's order. */
  addAll<M extends N>(items: NamedItems<M>): this {
    for (const [name, value] of Object.entries(items) as [M, TransactItem | readonly TransactItem[] | undefined][]) {
      this.add(name, ...(Array.isArray(value) ? value : [value as TransactItem | undefined]));
    }
    return this;
  }

  /** The request's items, in the order they were added. */
  get items(): TransactItem[] {
    return this.named.flatMap((entry) => entry.items);
  }

  /**
   * Sends the transaction. Undefined when it committed; the refusal when DynamoDB cancelled it for a condition
   * (an answer for the caller to read). Contention was already retried by the client (./contention.ts) and is
   * thrown when it outlasted the retries, like every other error.
   */
  async write(): Promise<Refusal<N> | undefined> {
    try {
      const command = new TransactWriteCommand({ TransactItems: this.items });
      await (this.site ? atSite(this.site, () => dynamo.send(command)) : dynamo.send(command));
      return undefined;
    } catch (err) {
      const refusal = this.refusalOf(err);
      if (!refusal || refusal.contention) throw err;
      return refusal;
    }
  }

  /** Reads `err` by this transaction's names: undefined unless it is a cancelled transaction. */
  refusalOf(err: unknown): Refusal<N> | undefined {
    if (
      !(err instanceof TransactionCanceledException) &&
      (err as { name?: string })?.name !== 'TransactionCanceledException'
    ) {
      return undefined;
    }
    const reasons: Reason[] = ((err as TransactionCanceledException).CancellationReasons ?? []).map((reason) => ({
      code: reason.Code ?? 'None',
      item: reason.Item ? unmarshall(reason.Item) : undefined,
    }));
    const byName = new Map<N, Reason[]>();
    let next = 0;
    for (const { name, items } of this.named) {
      byName.set(name, reasons.slice(next, next + items.length));
      next += items.length;
    }
    return new Refusal(byName, err);
  }
}
