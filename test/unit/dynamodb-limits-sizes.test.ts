import { itemBytes, numberBytes, type WireItem } from '../../local/dynamodb-limits/item-size';
import { indexEntryOf, tableSchemaOf, type TableDescription } from '../../local/dynamodb-limits/table-schema';

/**
 * Item sizes. The expected figures were measured on DynamoDB Local 3.3 (AWS's own engine), by
 * finding the padding at which a PutItem's write units step from 1 to 2 (1 KB): they agree with
 * the Developer Guide's rules ("Item sizes and formats") and pin down what the guide leaves loose
 * (numbers pair digits from the decimal point; a negative number takes a byte more; a list or map
 * element takes a byte of its own).
 */
describe('item sizes', () => {
  it('counts attribute names and UTF-8 values', () => {
    expect(itemBytes({ name: { S: 'héllo' } })).toBe(4 + 6);
    expect(itemBytes({ b: { B: Buffer.from('abcdef').toString('base64') } })).toBe(1 + 6);
    expect(itemBytes({ yes: { BOOL: true }, none: { NULL: true } })).toBe(3 + 1 + 4 + 1);
  });

  it.each([
    ['0', 1],
    ['1', 2],
    ['12', 2],
    ['123', 3],
    ['1000', 2],
    ['0.001', 2],
    ['1.5', 3],
    ['12.3', 3],
    ['123.45', 4],
    ['10', 2],
    ['100', 2],
    ['0.5', 2],
    ['0.05', 2],
    ['1E+5', 2],
    ['1.23e-3', 3],
    ['-12', 3],
    ['-123', 4],
    ['-5E2', 3],
    ['-0', 1],
    ['12345678901234567890', 11],
    ['1234567890123456789012345678901234567.8', 21],
  ])('sizes the number %s as %i bytes', (number, bytes) => {
    expect(numberBytes(number)).toBe(bytes);
  });

  it.each<[string, WireItem, number]>([
    ['an empty map', { v: { M: {} } }, 1 + 3],
    ['a list of a string and a number', { v: { L: [{ S: 'xyz' }, { N: '12' }] } }, 1 + 3 + (3 + 1) + (2 + 1)],
    [
      'nested maps and lists',
      { v: { M: { a: { L: [{ M: { b: { BOOL: false } } }] } } } },
      1 + (3 + 1 + (3 + (3 + 1 + 1 + 1) + 1) + 1),
    ],
    ['a string set', { v: { SS: ['ab', 'cde'] } }, 1 + 2 + 3],
    ['a number set', { v: { NS: ['12', '-3'] } }, 1 + 2 + 3],
  ])('sizes %s: 3 bytes per list or map, 1 per element, sets the sum of their elements', (_, item, bytes) => {
    expect(itemBytes(item)).toBe(bytes);
  });
});

describe('index entries', () => {
  const description = (projection: TableDescription['GlobalSecondaryIndexes']): TableDescription => ({
    TableName: 'things',
    TableArn: 'arn:aws:dynamodb:local:000000000000:table/things',
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: projection,
  });
  const item: WireItem = {
    pk: { S: 'p' },
    sk: { S: 's' },
    g: { S: 'group' },
    gs: { S: 'when' },
    kept: { S: 'abc' },
    other: { S: 'defgh' },
  };
  const index = (projection: { ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; NonKeyAttributes?: string[] }) => {
    const table = tableSchemaOf(
      description([
        {
          IndexName: 'byGroup',
          KeySchema: [
            { AttributeName: 'g', KeyType: 'HASH' },
            { AttributeName: 'gs', KeyType: 'RANGE' },
          ],
          Projection: projection,
        },
      ]),
    );
    return (image: WireItem) => indexEntryOf(table, table.indexes[0], image);
  };
  const keysBytes = 2 + 1 + 2 + 1 + 1 + 5 + 2 + 4;

  it('holds the table and index keys and what the projection names, plus 100 bytes of overhead', () => {
    expect(index({ ProjectionType: 'KEYS_ONLY' })(item)?.bytes).toBe(keysBytes + 100);
    expect(index({ ProjectionType: 'INCLUDE', NonKeyAttributes: ['kept'] })(item)?.bytes).toBe(keysBytes + 4 + 3 + 100);
    expect(index({ ProjectionType: 'ALL' })(item)?.bytes).toBe(itemBytes(item) + 100);
  });

  it('is absent when an index key attribute is missing, and keyed by the index partition key', () => {
    const entryOf = index({ ProjectionType: 'ALL' });
    const { gs: _gs, ...withoutSortKey } = item;
    expect(entryOf(withoutSortKey)).toBeUndefined();
    expect(entryOf(item)?.partitionKey).toBe('S:group');
  });

  it('changes content only when a projected attribute changes', () => {
    const entryOf = index({ ProjectionType: 'INCLUDE', NonKeyAttributes: ['kept'] });
    expect(entryOf({ ...item, other: { S: 'changed' } })?.content).toBe(entryOf(item)?.content);
    expect(entryOf({ ...item, kept: { S: 'changed' } })?.content).not.toBe(entryOf(item)?.content);
  });
});
