/**
 * An UpdateItem's expression built from one object of attributes instead of parallel lists of
 * clauses, names and values kept in step by hand: `set` (attribute -> value; `undefined` values
 * are left out, so optional fields need no branches), `setIfAbsent` (kept when already there),
 * `add` (numbers added) and `remove`. Placeholders are derived from the attribute names
 * (`#status`, and `:set_status` so they never meet a condition's values), so a caller never
 * writes one; a condition's own names and values are merged in, and a placeholder the two would
 * give different meanings is refused. No imports: entity modules of every context use it.
 */
/** A `set` value that is another attribute of the same item (`SET #status = #statusIfAnswered`). */
export class AttributeOfItem {
  constructor(readonly attribute: string) {}
}
export const attributeOfItem = (attribute: string) => new AttributeOfItem(attribute);

export type UpdateParts = {
  set?: Record<string, unknown>;
  setIfAbsent?: Record<string, unknown>;
  add?: Record<string, number>;
  remove?: readonly string[];
  /**
   * Keys of one map attribute set (`SET #map.#key = ...`) or removed (`REMOVE #map.#key`) one by one, so writers of
   * different keys never overwrite each other. The map itself must exist, and must not be in `set` or `remove`.
   */
  mapKeys?: { attribute: string; set: Record<string, unknown>; remove: readonly string[] };
};

/** A condition in DynamoDB's terms, with its own placeholders. */
export type Condition = { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };

export type UpdateExpression = {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

/** A placeholder-safe token for an attribute name (`gsi2pk` -> `gsi2pk`, `carrier-code` -> `carrier_code`). */
const token = (attribute: string) => attribute.replace(/[^A-Za-z0-9_]/g, '_');

export function updateExpression(parts: UpdateParts, condition?: Condition): UpdateExpression {
  const defined = (fields: Record<string, unknown> = {}) =>
    Object.entries(fields).filter(([, value]) => value !== undefined);
  const set = defined(parts.set);
  const setIfAbsent = defined(parts.setIfAbsent);
  const add = defined(parts.add);
  const remove = parts.remove ?? [];
  const copied = set
    .filter(([, value]) => value instanceof AttributeOfItem)
    .map(([, value]) => (value as AttributeOfItem).attribute);
  const attributes = [...set, ...setIfAbsent, ...add].map(([name]) => name).concat(remove);
  if (new Set(attributes).size !== attributes.length)
    throw new Error(`updateExpression: an attribute appears twice (${attributes.join(', ')})`);
  const keys = mapKeyClauses(parts.mapKeys);
  if (parts.mapKeys && attributes.includes(parts.mapKeys.attribute))
    throw new Error(`updateExpression: ${parts.mapKeys.attribute} is written whole and by key`);
  if (attributes.length === 0 && keys.set.length + keys.remove.length === 0)
    throw new Error('updateExpression: nothing to update');

  const setClauses = [
    ...set.map(
      ([name, value]) =>
        `#${token(name)} = ${value instanceof AttributeOfItem ? `#${token(value.attribute)}` : `:set_${token(name)}`}`,
    ),
    ...setIfAbsent.map(([name]) => `#${token(name)} = if_not_exists(#${token(name)}, :keep_${token(name)})`),
    ...keys.set,
  ];
  const removeClauses = [...remove.map((name) => `#${token(name)}`), ...keys.remove];
  const clauses = [
    setClauses.length > 0 ? `SET ${setClauses.join(', ')}` : '',
    removeClauses.length > 0 ? `REMOVE ${removeClauses.join(', ')}` : '',
    add.length > 0 ? `ADD ${add.map(([name]) => `#${token(name)} :add_${token(name)}`).join(', ')}` : '',
  ].filter((clause) => clause !== '');
  const names = merged(
    { ...Object.fromEntries([...attributes, ...copied].map((name) => [`#${token(name)}`, name])), ...keys.names },
    condition?.names,
  );
  const values = merged(
    Object.fromEntries([
      ...set
        .filter(([, value]) => !(value instanceof AttributeOfItem))
        .map(([name, value]) => [`:set_${token(name)}`, value]),
      ...setIfAbsent.map(([name, value]) => [`:keep_${token(name)}`, value]),
      ...add.map(([name, value]) => [`:add_${token(name)}`, value]),
      ...Object.entries(keys.values),
    ]),
    condition?.values,
  );
  return {
    UpdateExpression: clauses.join(' '),
    ...(condition && { ConditionExpression: condition.expression }),
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
  };
}

/** The update's placeholders with the condition's; one placeholder meaning two things is a bug. */
function merged<T>(own: Record<string, T>, theirs: Record<string, T> = {}): Record<string, T> {
  for (const [placeholder, meaning] of Object.entries(theirs)) {
    if (placeholder in own && own[placeholder] !== meaning)
      throw new Error(`updateExpression: ${placeholder} means two things`);
  }
  return { ...own, ...theirs };
}

/** The clauses of `mapKeys`: keys get numbered placeholders (`#map_k0`), since a key may hold any character. */
function mapKeyClauses(mapKeys: UpdateParts['mapKeys']) {
  if (!mapKeys) return { set: [], remove: [], names: {}, values: {} };
  const map = `#${token(mapKeys.attribute)}`;
  const names: Record<string, string> = { [map]: mapKeys.attribute };
  const values: Record<string, unknown> = {};
  const pathOf = (key: string, i: number) => {
    names[`${map}_k${i}`] = key;
    return `${map}.${map}_k${i}`;
  };
  const setKeys = Object.entries(mapKeys.set);
  const set = setKeys.map(([key, value], i) => {
    values[`:${token(mapKeys.attribute)}_k${i}`] = value;
    return `${pathOf(key, i)} = :${token(mapKeys.attribute)}_k${i}`;
  });
  const remove = mapKeys.remove.map((key, i) => pathOf(key, setKeys.length + i));
  return { set, remove, names, values };
}
