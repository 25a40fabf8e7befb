import type { WireItem } from './item-size';
import type { TableSchema } from './table-schema';

/**
 * What the engine knows of an item before a write, without reading it from DynamoDB Local. A write is charged on its
 * images before and after (write-charges.ts), and its admission drawn from them, so the engine used to read every item
 * a write holds before the write ran: about a third of the calls DynamoDB Local served, calls AWS never makes. Two
 * facts make most of those reads unnecessary, each exact where it is used (docs/local-engine.md, "Reads the engine
 * saves"):
 *
 * - **A row that must be new.** A write whose whole condition is `attribute_not_exists(<partition key>)` finds no item
 *   whenever it succeeds, so the engine takes "no item" for granted. When the write is refused, the guess may be wrong
 *   and the engine reads the item then, still holding it, to charge the refusal on what is there (`guessedNew`).
 * - **The last image the engine left** (only for an engine told it is its tables' only writer, `soleWriter`). Every
 *   write through the engine holds its item while it runs (item-holds.ts) and ends knowing the image it left (the put's
 *   item, no item after a delete, an update's new image, the image it found when refused). The next write of the item
 *   holds it too, so nothing can have changed it in between unless something wrote past the engine: hence the
 *   setting. The one change DynamoDB makes by itself is the expiry of an item whose TTL attribute has passed, so such
 *   an image is not trusted. An engine that has moreover seen every write since its tables were empty (`startedEmpty`)
 *   knows that an item it never wrote does not exist: a new contact's search entries, a new message's rows.
 */

/** An item a write holds: where it is, and whether the write's condition says it must be new. */
export type WriteTarget = { table: TableSchema; key: WireItem; mustBeNew: boolean };

/** A write's condition that holds only for an absent item, as the whole expression (the service's `rowIsNew`). */
const ABSENT_KEY_CONDITION = /^\s*attribute_not_exists\s*\(\s*([#\w-]+)\s*\)\s*$/;

/** Whether a write's input (`ConditionExpression`, `ExpressionAttributeNames`) requires its item to be absent. */
export function requiresNewItem(
  table: TableSchema,
  input: { ConditionExpression?: unknown; ExpressionAttributeNames?: Record<string, string> } | undefined,
): boolean {
  if (typeof input?.ConditionExpression !== 'string') return false;
  const named = ABSENT_KEY_CONDITION.exec(input.ConditionExpression)?.[1];
  if (named === undefined) return false;
  const attribute = named.startsWith('#') ? input.ExpressionAttributeNames?.[named] : named;
  return attribute === table.key.partitionKey;
}

/**
 * The images the engine's writes left, by hold key (engine.ts `holdKey`), the least recently used dropped beyond
 * `capacity`. `null` is an item known to be absent. With `complete` (an engine that has seen every write since its
 * tables were empty, `startedEmpty`), an item it never wrote does not exist either, so only the items whose image it
 * dropped or whose write's outcome it could not know (`maybeExisting`) are unknown.
 */
export class KnownImages {
  private readonly images = new Map<string, WireItem | null>();
  private readonly maybeExisting = new Set<string>();

  constructor(
    private readonly capacity: number,
    private readonly complete = false,
  ) {}

  /** The image (null: no item), or undefined when it is not known or its TTL has passed (DynamoDB may expire it). */
  get(holdKey: string, ttlAttribute: string | undefined, nowSeconds: number): WireItem | null | undefined {
    const image = this.images.get(holdKey);
    if (image === undefined) return this.complete && !this.maybeExisting.has(holdKey) ? null : undefined;
    const expiry = ttlAttribute && image ? image[ttlAttribute] : undefined;
    if (expiry && 'N' in expiry && Number(expiry.N) <= nowSeconds) {
      this.forget(holdKey);
      return undefined;
    }
    this.images.delete(holdKey);
    this.images.set(holdKey, image);
    return image;
  }

  record(holdKey: string, image: WireItem | undefined): void {
    this.images.delete(holdKey);
    this.maybeExisting.delete(holdKey);
    this.images.set(holdKey, image ?? null);
    if (this.images.size <= this.capacity) return;
    const [dropped, droppedImage] = this.images.entries().next().value as [string, WireItem | null];
    this.images.delete(dropped);
    if (droppedImage !== null && this.complete) this.maybeExisting.add(dropped);
  }

  forget(holdKey: string): void {
    this.images.delete(holdKey);
    if (this.complete) this.maybeExisting.add(holdKey);
  }

  /** A table deleted (hold keys starting with `prefix`): none of its items exists any more. */
  dropTable(prefix: string): void {
    for (const key of [...this.images.keys()]) if (key.startsWith(prefix)) this.images.delete(key);
    for (const key of [...this.maybeExisting]) if (key.startsWith(prefix)) this.maybeExisting.delete(key);
  }

  /** Images kept. */
  get size(): number {
    return this.images.size;
  }
}
