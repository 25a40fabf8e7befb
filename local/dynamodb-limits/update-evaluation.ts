import type { WireItem, WireValue } from './item-size';
import type { UpdateInput } from './update-prediction';

/**
 * The item an update leaves, computed from the item before it and its update expression, so a transaction's updated
 * items need not be read back from DynamoDB Local after the commit (transact-write.ts). Only for what it can compute
 * exactly, the updates the service writes: `SET` of top-level attributes to a value, an attribute, `if_not_exists`,
 * `list_append` or the sum or difference of two integers; `REMOVE` of top-level attributes; `ADD` to an integer or a
 * set; `DELETE` from a set. Anything else (a nested path, a decimal number, an operand naming an attribute the same
 * update changes, the legacy `AttributeUpdates`) answers undefined, and the engine reads the item back as before.
 * Applied only to an update that committed, which DynamoDB accepted as valid.
 */
export function updatedImage(key: WireItem, before: WireItem | undefined, update: UpdateInput): WireItem | undefined {
  if (update.AttributeUpdates || typeof update.UpdateExpression !== 'string') return undefined;
  const actions = parseUpdate(update.UpdateExpression);
  if (!actions) return undefined;
  const names = update.ExpressionAttributeNames ?? {};
  const values = update.ExpressionAttributeValues ?? {};
  const original: WireItem = before ?? key;
  const resolved = actions.map((action) => ({ ...action, name: nameOf(action.path, names) }));
  if (resolved.some((action) => action.name === undefined || action.name in key)) return undefined;
  const after: WireItem = { ...original };
  for (const action of resolved) {
    const name = action.name!;
    // Operands are read from the item before the update (`SET n = n + :one`); one naming an attribute another action of
    // the same update changes is not evaluated (DynamoDB's documentation shows no such case).
    const changedByOthers = new Set(resolved.filter((other) => other !== action).map((other) => other.name!));
    const context: Context = { original, names, values, changed: changedByOthers };
    if (action.kind === 'REMOVE') {
      delete after[name];
      continue;
    }
    const value = action.kind === 'SET' ? evaluate(action.value, context) : operandValue(action.value.left, context);
    if (!value) return undefined;
    const result =
      action.kind === 'SET'
        ? value
        : action.kind === 'ADD'
          ? added(original[name], value)
          : deleted(original[name], value);
    if (result === undefined) return undefined;
    if (result === 'removed') delete after[name];
    else after[name] = result;
  }
  return after;
}

type Operand =
  | { kind: 'path'; path: string }
  | { kind: 'value'; name: string }
  | { kind: 'call'; fn: string; args: Operand[] };
type Value = { left: Operand; op?: '+' | '-'; right?: Operand };
type Action = { kind: 'SET' | 'ADD' | 'DELETE'; path: string; value: Value } | { kind: 'REMOVE'; path: string };
type Context = {
  original: WireItem;
  names: Record<string, string>;
  values: Record<string, WireValue>;
  changed: Set<string>;
};

const KEYWORDS = new Set(['SET', 'REMOVE', 'ADD', 'DELETE']);
const TOKEN = /\s*(#[\w-]+|:[\w-]+|[A-Za-z_][\w-]*|[(),=+\-.[\]]|\S)/gy;

function tokensOf(expression: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(expression); match; match = TOKEN.exec(expression)) tokens.push(match[1]);
  return tokens;
}

/** The actions of an update expression, or undefined for one the evaluator does not take (see `updatedImage`). */
function parseUpdate(expression: string): Action[] | undefined {
  const tokens = tokensOf(expression);
  let at = 0;
  const peek = () => tokens[at];
  const next = () => tokens[at++];
  const path = (): string | undefined => {
    const name = next();
    if (!name || !/^[#A-Za-z_]/.test(name) || KEYWORDS.has(name.toUpperCase())) return undefined;
    return peek() === '.' || peek() === '[' ? undefined : name; // nested paths are not evaluated
  };
  const operand = (): Operand | undefined => {
    const token = peek();
    if (token === undefined) return undefined;
    if (token.startsWith(':')) return { kind: 'value', name: next() };
    if (/^[A-Za-z_]/.test(token) && tokens[at + 1] === '(') {
      const fn = next();
      next();
      const args: Operand[] = [];
      for (;;) {
        const arg = operand();
        if (!arg) return undefined;
        args.push(arg);
        const separator = next();
        if (separator === ')') break;
        if (separator !== ',') return undefined;
      }
      return { kind: 'call', fn, args };
    }
    const named = path();
    return named === undefined ? undefined : { kind: 'path', path: named };
  };
  const actions: Action[] = [];
  while (at < tokens.length) {
    const keyword = next().toUpperCase();
    if (!KEYWORDS.has(keyword)) return undefined;
    for (;;) {
      const target = path();
      if (target === undefined) return undefined;
      if (keyword === 'REMOVE') actions.push({ kind: 'REMOVE', path: target });
      else {
        if (keyword === 'SET' && next() !== '=') return undefined;
        const left = operand();
        if (!left) return undefined;
        const value: Value = { left };
        if (keyword === 'SET' && (peek() === '+' || peek() === '-')) {
          value.op = next() as '+' | '-';
          value.right = operand();
          if (!value.right) return undefined;
        }
        actions.push({ kind: keyword as 'SET' | 'ADD' | 'DELETE', path: target, value });
      }
      if (peek() !== ',') break;
      next();
    }
    if (at < tokens.length && !KEYWORDS.has(peek().toUpperCase())) return undefined;
  }
  return actions.length > 0 ? actions : undefined;
}

const nameOf = (path: string, names: Record<string, string>): string | undefined =>
  path.startsWith('#') ? names[path] : path;

function operandValue(operand: Operand, context: Context): WireValue | undefined {
  if (operand.kind === 'value') return exact(context.values[operand.name]);
  if (operand.kind === 'path') {
    const name = nameOf(operand.path, context.names);
    if (name === undefined || context.changed.has(name)) return undefined;
    return context.original[name];
  }
  const [first, second] = operand.args;
  if (operand.fn === 'if_not_exists' && operand.args.length === 2 && first.kind === 'path') {
    const name = nameOf(first.path, context.names);
    if (name === undefined || context.changed.has(name)) return undefined;
    return context.original[name] ?? operandValue(second, context);
  }
  if (operand.fn === 'list_append' && operand.args.length === 2) {
    const [a, b] = [operandValue(first, context), operandValue(second, context)];
    return a && b && 'L' in a && 'L' in b ? { L: [...a.L, ...b.L] } : undefined;
  }
  return undefined;
}

function evaluate(value: Value, context: Context): WireValue | undefined {
  const left = operandValue(value.left, context);
  if (!value.op || !left) return left;
  const right = operandValue(value.right!, context);
  const [a, b] = [integerOf(left), right && integerOf(right)];
  if (a === undefined || b === undefined) return undefined;
  return { N: String(value.op === '+' ? a + b : a - b) };
}

/** A number DynamoDB stores as written (no leading zeros, no trailing fraction zeros), or undefined. */
const CANONICAL_NUMBER = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

/** A value whose numbers are written as DynamoDB stores them; else undefined (their stored text is not computed). */
function exact(value: WireValue | undefined): WireValue | undefined {
  if (!value) return undefined;
  if ('N' in value) return CANONICAL_NUMBER.test(value.N) && value.N !== '-0' ? value : undefined;
  if ('NS' in value) return value.NS.every((n) => CANONICAL_NUMBER.test(n)) ? value : undefined;
  if ('L' in value) return value.L.every((v) => exact(v)) ? value : undefined;
  if ('M' in value) return Object.values(value.M).every((v) => exact(v)) ? value : undefined;
  return value;
}

const integerOf = (value: WireValue): bigint | undefined =>
  'N' in value && /^-?\d+$/.test(value.N) ? BigInt(value.N) : undefined;

/** ADD: an integer added to (or an attribute created as) the value; a set's members joined. */
function added(current: WireValue | undefined, value: WireValue): WireValue | undefined {
  if (!current) return value;
  if ('N' in value) {
    const [a, b] = [integerOf(current), integerOf(value)];
    return a === undefined || b === undefined ? undefined : { N: String(a + b) };
  }
  const type = setTypeOf(value);
  if (!type || !(type in current)) return undefined;
  const members = (current as Record<string, string[]>)[type];
  return { [type]: [...new Set([...members, ...(value as Record<string, string[]>)[type]])] } as WireValue;
}

/** DELETE: a set's members taken out; a set left empty is removed, as DynamoDB keeps no empty set. */
function deleted(current: WireValue | undefined, value: WireValue): WireValue | 'removed' | undefined {
  const type = setTypeOf(value);
  if (!type) return undefined;
  if (!current) return 'removed';
  if (!(type in current)) return undefined;
  const taken = new Set((value as Record<string, string[]>)[type]);
  const left = (current as Record<string, string[]>)[type].filter((member) => !taken.has(member));
  return left.length === 0 ? 'removed' : ({ [type]: left } as WireValue);
}

const setTypeOf = (value: WireValue): 'SS' | 'NS' | 'BS' | undefined =>
  'SS' in value ? 'SS' : 'NS' in value ? 'NS' : 'BS' in value ? 'BS' : undefined;
