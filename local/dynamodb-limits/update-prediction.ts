import type { WireItem, WireValue } from './item-size';
import type { TableSchema } from './table-schema';

/**
 * Where an update will move its item in each global secondary index, known before it runs, so a
 * budget can refuse it whole when the index partition it enters is over budget (DynamoDB: a
 * global secondary index short of write capacity throttles the table's writes). The engine does
 * not evaluate update expressions; it reads what they do to the index key attributes, which is
 * what decides the index partitions: `SET k = :v`, `SET k = if_not_exists(k, :v)`, `SET k = other`
 * and `REMOVE k` (and the legacy `AttributeUpdates` PUT and DELETE). Any other action on an index
 * key attribute leaves it as it was in the prediction; the write then settles on the index
 * partition it really landed in (docs/local-engine.md).
 */
export type UpdateInput = {
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, WireValue>;
  AttributeUpdates?: Record<string, { Action?: string; Value?: WireValue }>;
};

/** What an update does to one top-level attribute: a new value, removal, or something the engine does not predict. */
type Change = { value: WireValue } | 'removed' | 'unpredicted';

const CLAUSE = /\b(SET|REMOVE|ADD|DELETE)\b/gi;

/** Splits on commas outside parentheses. */
function topLevelList(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '(') depth += 1;
    else if (text[i] === ')') depth -= 1;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}

/**
 * The clauses of an update expression, by keyword (SET, REMOVE, ADD, DELETE: reserved words, so never bare attribute
 * names).
 */
function clausesOf(expression: string): { keyword: string; actions: string[] }[] {
  const marks = [...expression.matchAll(CLAUSE)];
  return marks.map((mark, n) => ({
    keyword: mark[1].toUpperCase(),
    actions: topLevelList(expression.slice(mark.index! + mark[0].length, marks[n + 1]?.index ?? expression.length)),
  }));
}

/** The changes an update makes to top-level attributes, by name. */
function changesOf(update: UpdateInput, before: WireItem | undefined): Map<string, Change> {
  const changes = new Map<string, Change>();
  const names = update.ExpressionAttributeNames ?? {};
  const values = update.ExpressionAttributeValues ?? {};
  // A top-level attribute name, or undefined for a nested path (`a.b`, `a[0]`), which never changes an index key.
  const attribute = (path: string): string | undefined =>
    /^[#\w-]+$/.test(path) ? (path.startsWith('#') ? names[path] : path) : undefined;
  const valueOf = (operand: string): WireValue | undefined => {
    if (operand.startsWith(':')) return values[operand];
    const name = attribute(operand);
    return name === undefined ? undefined : before?.[name];
  };
  for (const { keyword, actions } of clausesOf(update.UpdateExpression ?? '')) {
    for (const action of actions) {
      const name = attribute(keyword === 'SET' ? action.split('=')[0].trim() : action.split(/\s+/)[0]);
      if (name === undefined) continue;
      if (keyword === 'REMOVE') {
        changes.set(name, 'removed');
        continue;
      }
      const assigned = keyword === 'SET' ? action.slice(action.indexOf('=') + 1).trim() : '';
      const ifNotExists = /^if_not_exists\s*\(\s*([#\w-]+)\s*,\s*(\S+?)\s*\)$/i.exec(assigned);
      const value = ifNotExists
        ? (valueOf(ifNotExists[1]) ?? valueOf(ifNotExists[2]))
        : /^[#:\w-]+$/.test(assigned)
          ? valueOf(assigned)
          : undefined;
      changes.set(name, value ? { value } : 'unpredicted');
    }
  }
  for (const [name, { Action = 'PUT', Value } = {}] of Object.entries(update.AttributeUpdates ?? {})) {
    changes.set(
      name,
      Action === 'DELETE' && !Value ? 'removed' : Action === 'PUT' && Value ? { value: Value } : 'unpredicted',
    );
  }
  return changes;
}

/**
 * The item as the update is expected to leave its index keys: the current image (or the key
 * alone for an item the update creates) with the index key attributes the update sets or removes.
 * Other attributes stay as they were: the image serves to place the item in the indexes.
 */
export function predictedIndexImage(
  table: TableSchema,
  key: WireItem,
  before: WireItem | undefined,
  update: UpdateInput,
): WireItem {
  const image: WireItem = { ...(before ?? key) };
  const changes = changesOf(update, before);
  const indexKeys = new Set(
    table.indexes.flatMap((index) => [index.partitionKey, index.sortKey]).filter((name): name is string => !!name),
  );
  for (const name of indexKeys) {
    const change = changes.get(name);
    if (change === 'removed') delete image[name];
    else if (change !== undefined && change !== 'unpredicted') image[name] = change.value;
  }
  return image;
}
