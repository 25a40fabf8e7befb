/**
 * Item sizes as DynamoDB computes them for capacity units (DynamoDB Developer Guide, "Item sizes
 * and formats" / "Capacity unit consumption"): the sum of every attribute's name and value, where
 * - a string is its UTF-8 bytes; a binary its raw bytes (the wire carries base64);
 * - a number is 1 byte per two significant digits (leading and trailing zeroes trimmed) plus 1
 *   (numberBytes has the exact pairing);
 * - null and Boolean are 1 byte;
 * - a list or map is 3 bytes plus its elements (a map's nested names count; so does 1 byte per
 *   element, as DynamoDB Local 3.x, AWS's own engine, computes it: see item-size.test.ts);
 * - a set is the sum of its elements.
 * Sizes are checked against DynamoDB Local's own arithmetic byte for byte in the unit tests.
 */

/** An attribute value as DynamoDB's JSON protocol carries it (binary as base64 text). */
export type WireValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] }
  | { M: WireItem }
  | { L: WireValue[] }
  | { NULL: boolean }
  | { BOOL: boolean };

export type WireItem = Record<string, WireValue>;

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

const binaryBytes = (base64: string): number => Buffer.from(base64, 'base64').length;

/**
 * 1 byte per two significant digits, plus 1 (DynamoDB Developer Guide, "Item sizes and formats").
 * Precisely, as DynamoDB Local computes it: digits are paired from the decimal point outwards
 * (base 100), zero pairs at either end are dropped, and a negative number takes 1 byte more. So
 * `1.5` (pairs 01 and 50) is 3 bytes, `1000` (10 and 00) is 2, `-12` is 3.
 */
export function numberBytes(text: string): number {
  const match = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
  if (!match) return 1 + Math.ceil(text.length / 2); // not a number DynamoDB accepts: never reaches it
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  // Move the decimal point by the exponent: the pairs follow the value, not how it was written.
  const shift = Number(exponent);
  const digits = whole + fraction;
  const pointAt = whole.length + shift;
  const integerPart = pointAt <= 0 ? '' : digits.slice(0, pointAt).padEnd(pointAt, '0');
  const fractionPart = pointAt >= 0 ? digits.slice(pointAt) : '0'.repeat(-pointAt) + digits;
  const paired =
    (integerPart.length % 2 ? '0' : '') + integerPart + fractionPart + (fractionPart.length % 2 ? '0' : '');
  const pairs = paired.match(/../g) ?? [];
  let first = 0;
  let last = pairs.length;
  while (first < last && pairs[first] === '00') first += 1;
  while (last > first && pairs[last - 1] === '00') last -= 1;
  const isZero = first === last;
  return last - first + 1 + (sign === '-' && !isZero ? 1 : 0);
}

/** The size of one value, without its attribute name. */
export function valueBytes(value: WireValue): number {
  if ('S' in value) return utf8Bytes(value.S);
  if ('N' in value) return numberBytes(value.N);
  if ('B' in value) return binaryBytes(value.B);
  if ('SS' in value) return value.SS.reduce((sum, s) => sum + utf8Bytes(s), 0);
  if ('NS' in value) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if ('BS' in value) return value.BS.reduce((sum, b) => sum + binaryBytes(b), 0);
  if ('M' in value)
    return (
      3 + Object.entries(value.M).reduce((sum, [name, nested]) => sum + utf8Bytes(name) + valueBytes(nested) + 1, 0)
    );
  if ('L' in value) return 3 + value.L.reduce((sum, nested) => sum + valueBytes(nested) + 1, 0);
  return 1; // NULL, BOOL
}

/** The size DynamoDB bills an item by: every attribute's name plus its value. */
export function itemBytes(item: WireItem): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8Bytes(name) + valueBytes(value), 0);
}
