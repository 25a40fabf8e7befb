import { Budgets, type Draw } from '../../local/dynamodb-limits/budgets';
import type { ChargeLine } from '../../local/dynamodb-limits/charges';
import { ItemHolds } from '../../local/dynamodb-limits/item-holds';
import type { WireItem } from '../../local/dynamodb-limits/item-size';
import { DEFAULT_BUDGETS } from '../../local/dynamodb-limits/limits-proxy';
import { indexEntryOf, tableSchemaOf, type TableSchema } from '../../local/dynamodb-limits/table-schema';
import { predictedIndexImage } from '../../local/dynamodb-limits/update-prediction';
import {
  drawsOf,
  expectedWriteLines,
  itemWriteLines,
  PredictedUpdate,
} from '../../local/dynamodb-limits/write-charges';

/**
 * The engine as strict as DynamoDB where it used to be gentler (docs/local-engine.md), one rule
 * per block: reads and writes of a key share one budget; an index partition over budget refuses
 * the table write; a write cancels a transactional read it lands in; an index entry weighs 100
 * bytes more than its attributes. On a clock the tests move.
 */
let now = 0;
const clock = () => now;
beforeEach(() => (now = 0));

const table: TableSchema = tableSchemaOf({
  TableName: 't',
  TableArn: 'arn:t',
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: 'byGroup',
      IndexArn: 'arn:t/index/byGroup',
      KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }],
      Projection: { ProjectionType: 'ALL' },
    },
  ],
});
const tableLine = (
  partitionKey: string,
  itemKey: string,
  units: { readUnits?: number; writeUnits?: number },
): Draw => ({
  table: 't',
  index: undefined,
  partitionKey,
  itemKey,
  readUnits: units.readUnits ?? 0,
  writeUnits: units.writeUnits ?? 0,
  resource: 'arn:t',
  itemIndex: 0,
});
const refusedReasons = (result: ReturnType<Budgets['reserve']>) =>
  'refused' in result ? result.refused.reasons.map((r) => r.reason) : [];
const admitted = (result: ReturnType<Budgets['reserve']>) => 'reservation' in result;

describe('reads and writes of one key share one budget: 3,000 read units or 1,000 write units a second, or a linear combination', () => {
  it('refuses any read of a partition that took 1,000 write units within the second, and admits it once they are a second old', () => {
    const budgets = new Budgets(DEFAULT_BUDGETS, clock);
    for (let item = 0; item < 10; item += 1)
      expect(admitted(budgets.reserve('db', [tableLine('P', `P#${item}`, { writeUnits: 100 })]))).toBe(true);

    now = 999;
    const during = budgets.reserve('db', [tableLine('P', 'P#other', { readUnits: 0.5 })]);
    now = 1_000;
    const after = budgets.reserve('db', [tableLine('P', 'P#other', { readUnits: 0.5 })]);

    expect(refusedReasons(during)).toEqual(['TableReadKeyRangeThroughputExceeded']);
    expect(admitted(after)).toBe(true);
  });

  it('counts a write unit as 3 read units: 1,500 read and 500 write units fill a partition; 1,500 and 499 leave 3 read units', () => {
    const full = new Budgets(DEFAULT_BUDGETS, clock);
    full.reserve('db', [tableLine('P', 'P#a', { readUnits: 1500 })]);
    full.reserve('db', [tableLine('P', 'P#b', { writeUnits: 500 })]);
    const almost = new Budgets(DEFAULT_BUDGETS, clock);
    almost.reserve('db', [tableLine('P', 'P#a', { readUnits: 1500 })]);
    almost.reserve('db', [tableLine('P', 'P#b', { writeUnits: 499 })]);

    expect(refusedReasons(full.reserve('db', [tableLine('P', 'P#c', { readUnits: 0.5 })]))).toEqual([
      'TableReadKeyRangeThroughputExceeded',
    ]);
    expect(refusedReasons(full.reserve('db', [tableLine('P', 'P#c', { writeUnits: 1 })]))).toEqual([
      'TableWriteKeyRangeThroughputExceeded',
    ]);
    expect(admitted(almost.reserve('db', [tableLine('P', 'P#c', { readUnits: 3 })]))).toBe(true);
    expect(admitted(almost.reserve('db', [tableLine('P', 'P#d', { readUnits: 0.5 })]))).toBe(false);
  });

  it('shares the budget of one item and of one index partition the same way', () => {
    const budgets = new Budgets(DEFAULT_BUDGETS, clock);
    const indexWrite: Draw = {
      table: 't',
      index: 'byGroup',
      partitionKey: 'G',
      itemKey: undefined,
      readUnits: 0,
      writeUnits: 1000,
      resource: 'arn:t/index/byGroup',
      itemIndex: 0,
    };
    budgets.reserve('db', [tableLine('P', 'P#hot', { writeUnits: 1000 })]); // the item and its partition
    budgets.reserve('db', [indexWrite]);

    const itemRead = budgets.reserve('db', [tableLine('Q', 'P#hot', { readUnits: 1 })]); // another partition value, the same item key
    const indexQuery = budgets.reserve('db', [{ ...indexWrite, readUnits: 0.5, writeUnits: 0 }]);

    expect(refusedReasons(itemRead)).toEqual(['TableReadKeyRangeThroughputExceeded']);
    expect(refusedReasons(indexQuery)).toEqual(['IndexReadKeyRangeThroughputExceeded']);
  });
});

describe('a write whose index partition is over budget is refused whole, naming the index', () => {
  const key: WireItem = { pk: { S: 'P' }, sk: { S: 'one' } };
  const before: WireItem = { ...key, group: { S: 'A' }, v: { S: 'x' } };
  const moveTo = (expression: string, values: Record<string, WireItem[string]> = {}) =>
    predictedIndexImage(table, key, before, {
      UpdateExpression: expression,
      ExpressionAttributeNames: { '#g': 'group' },
      ExpressionAttributeValues: values,
    });

  it('draws an update on the index partition it moves its entry into, before it runs', () => {
    const lines = expectedWriteLines(
      table,
      key,
      before,
      new PredictedUpdate(moveTo('SET v = :v, #g = :b', { ':v': { S: 'y' }, ':b': { S: 'B' } })),
      'standard',
    );

    expect(lines.map((l) => [l.index ?? 'table', l.partitionKey, l.writeUnits])).toEqual([
      ['table', 'S:P', 1],
      ['byGroup', 'S:A', 1],
      ['byGroup', 'S:B', 1],
    ]);
  });

  it('reads where the update leaves the index key: set, if_not_exists, copied, removed, the legacy AttributeUpdates, or unknown (left in place)', () => {
    expect(moveTo('SET #g = if_not_exists(#g, :b)', { ':b': { S: 'B' } }).group).toEqual({ S: 'A' });
    expect(
      predictedIndexImage(table, key, undefined, {
        UpdateExpression: 'SET #g = if_not_exists(#g, :b)',
        ExpressionAttributeNames: { '#g': 'group' },
        ExpressionAttributeValues: { ':b': { S: 'B' } },
      }).group,
    ).toEqual({ S: 'B' });
    expect(moveTo('SET #g = v').group).toEqual({ S: 'x' });
    expect(moveTo('SET v = :v REMOVE #g', { ':v': { S: 'y' } }).group).toBeUndefined();
    expect(
      predictedIndexImage(table, key, before, { AttributeUpdates: { group: { Action: 'PUT', Value: { S: 'C' } } } })
        .group,
    ).toEqual({ S: 'C' });
    expect(moveTo('SET #g = :a + :b', { ':a': { S: 'B' }, ':b': { S: 'C' } }).group).toEqual({ S: 'A' });
  });

  it('refuses the whole write when the index partition it enters has no room, leaving the table partition untouched', () => {
    const budgets = new Budgets(DEFAULT_BUDGETS, clock);
    budgets.reserve(
      'db',
      drawsOf(
        table,
        [{ table: 't', index: 'byGroup', partitionKey: 'S:B', itemKey: undefined, readUnits: 0, writeUnits: 1000 }],
        0,
      ),
    );
    const move = drawsOf(
      table,
      expectedWriteLines(
        table,
        key,
        before,
        new PredictedUpdate(moveTo('SET #g = :b', { ':b': { S: 'B' } })),
        'standard',
      ),
      0,
    );

    const result = budgets.reserve('db', move);

    expect(result).toEqual({
      refused: {
        itemIndexes: new Map([
          [0, { reason: 'IndexWriteKeyRangeThroughputExceeded', resource: 'arn:t/index/byGroup' }],
        ]),
        reasons: [{ reason: 'IndexWriteKeyRangeThroughputExceeded', resource: 'arn:t/index/byGroup' }],
      },
    });
    expect(admitted(budgets.reserve('db', [tableLine('S:P', 'S:P\u0000S:one', { writeUnits: 1000 })]))).toBe(true); // nothing was taken
  });

  it('draws a put or a delete on the index partition its old entry leaves', () => {
    const put = expectedWriteLines(table, key, before, { ...key, v: { S: 'no group' } }, 'standard');
    const deleted = expectedWriteLines(table, key, before, undefined, 'standard');

    expect(put.filter((l) => l.index).map((l) => l.partitionKey)).toEqual(['S:A']);
    expect(deleted.filter((l) => l.index).map((l) => l.partitionKey)).toEqual(['S:A']);
  });
});

describe('a write landing on an item a TransactGetItems is reading cancels the read', () => {
  it('marks the items a write takes during the read, whatever started first, and leaves the others and later writes alone', async () => {
    const holds = new ItemHolds();
    const reading = holds.read(['a', 'b', 'c']);
    const otherRead = holds.read(['b']);

    (await holds.hold(['b'], 'write')).release();
    (await holds.hold(['x'], 'transaction')).release();
    const conflicts = reading.conflicts();
    reading.release();
    (await holds.hold(['c'], 'write')).release();

    expect(conflicts).toEqual([1]);
    expect(reading.conflicts()).toEqual([1]);
    expect(otherRead.conflicts()).toEqual([0]);
  });

  it('counts the items it reads as held, for tests that act inside the window', () => {
    const holds = new ItemHolds();
    const reading = holds.read(['a', 'b']);
    expect(holds.size).toBe(2);
    reading.release();
    expect(holds.size).toBe(0);
  });
});

describe('an index entry weighs its attributes plus 100 bytes, in its charges and its budget', () => {
  // 950 bytes of attributes: one 1 KB block as a table item, two as an index entry (1,050 bytes).
  const item: WireItem = {
    pk: { S: 'P' },
    sk: { S: 'one' },
    group: { S: 'G' },
    v: { S: 'x'.repeat(950 - 2 - 1 - 2 - 3 - 5 - 1 - 1) },
  };

  it('sizes the entry with its overhead, and charges its put 2 write units where the table write is 1', () => {
    const lines: ChargeLine[] = itemWriteLines(table, item, undefined, item, 'standard');

    expect(indexEntryOf(table, table.indexes[0], item)?.bytes).toBe(950 + 100);
    expect(lines.map((l) => [l.index ?? 'table', l.writeUnits])).toEqual([
      ['table', 1],
      ['byGroup', 2],
    ]);
  });

  it('draws the 2 units on the index partition: a budget of 2 a second admits one such write, then refuses a 1-unit entry', () => {
    const budgets = new Budgets({ ...DEFAULT_BUDGETS, indexPartitionWriteUnits: 2 }, clock);
    const small: WireItem = { pk: { S: 'P' }, sk: { S: 'two' }, group: { S: 'G' } };

    const first = budgets.reserve(
      'db',
      drawsOf(table, expectedWriteLines(table, item, undefined, item, 'standard'), 0),
    );
    const second = budgets.reserve(
      'db',
      drawsOf(table, expectedWriteLines(table, small, undefined, small, 'standard'), 0),
    );

    expect(admitted(first)).toBe(true);
    expect(refusedReasons(second)).toEqual(['IndexWriteKeyRangeThroughputExceeded']);
  });
});
