import { Budgets } from '../../local/dynamodb-limits/budgets';
import type { ChargeLine } from '../../local/dynamodb-limits/charges';
import { consumedCapacity } from '../../local/dynamodb-limits/charges';
import { ItemHolds } from '../../local/dynamodb-limits/item-holds';
import { queriedPartitionKey } from '../../local/dynamodb-limits/page-reads';
import { SecondWindows } from '../../local/dynamodb-limits/second-windows';

/** The engine's bookkeeping, on a clock the tests move. */
let now = 0;
const clock = () => now;
beforeEach(() => (now = 0));

describe('one-second windows', () => {
  it("admit a second's worth, then nothing until the oldest units are a second old", () => {
    const windows = new SecondWindows(1000, clock);
    windows.take('pk', 600);
    now = 500;
    windows.take('pk', 400);

    now = 999;
    expect(windows.admits('pk', 1)).toBe(false);
    now = 1_000; // the 600 taken at 0 are a second old
    expect(windows.admits('pk', 600)).toBe(true);
    expect(windows.admits('pk', 601)).toBe(false);
    expect(windows.admits('other', 1000)).toBe(true);
  });

  it('count an under-estimate settled later in full until it is a second old, and admit a request larger than the window once it is empty', () => {
    const windows = new SecondWindows(10, clock);
    const taken = windows.take('pk', 1);
    windows.settle('pk', taken, 25); // the request really cost 25

    now = 999;
    expect(windows.admits('pk', 1)).toBe(false);
    now = 1_000;
    expect(windows.admits('pk', 50)).toBe(true);
  });

  it('admit everything at capacity 0 (the budget is off)', () => {
    const windows = new SecondWindows(0, clock);
    windows.take('pk', 1e9);
    expect(windows.admits('pk', 1e9)).toBe(true);
  });
});

describe('budgets', () => {
  const line = (partitionKey: string, writeUnits: number, itemKey = `${partitionKey}#item`): ChargeLine => ({
    table: 't',
    index: undefined,
    partitionKey,
    itemKey,
    readUnits: 0,
    writeUnits,
  });
  const rates = {
    partitionWriteUnits: 10,
    itemWriteUnits: 1000,
    indexPartitionWriteUnits: 1000,
    partitionReadUnits: 1000,
    itemReadUnits: 1000,
  };

  it('sum the items of one request in one partition, and refuse them together', () => {
    const budgets = new Budgets(rates, clock);
    budgets.reserve('db', [{ ...line('hot', 6, 'first'), resource: 'arn:t', itemIndex: 0 }]); // 4 units left

    const result = budgets.reserve('db', [
      { ...line('hot', 3, 'a'), resource: 'arn:t', itemIndex: 0 },
      { ...line('hot', 3, 'b'), resource: 'arn:t', itemIndex: 1 },
    ]);

    const reason = { reason: 'TableWriteKeyRangeThroughputExceeded', resource: 'arn:t' };
    expect(result).toEqual({
      refused: {
        itemIndexes: new Map([
          [0, reason],
          [1, reason],
        ]),
        reasons: [reason],
      },
    });
    expect('reservation' in budgets.reserve('db', [{ ...line('hot', 3, 'a'), resource: 'arn:t', itemIndex: 0 }])).toBe(
      true,
    );
  });

  it('settle a reservation at what the request really cost', () => {
    const budgets = new Budgets(rates, clock);
    const result = budgets.reserve('db', [{ ...line('pk', 1), resource: 'arn:t', itemIndex: 0 }]);
    if (!('reservation' in result)) throw new Error('refused');

    result.reservation.settle([line('pk', 10)]);

    expect('refused' in budgets.reserve('db', [{ ...line('pk', 1), resource: 'arn:t', itemIndex: 0 }])).toBe(true);
    expect('reservation' in budgets.reserve('other-db', [{ ...line('pk', 1), resource: 'arn:t', itemIndex: 0 }])).toBe(
      true,
    );
  });
});

describe('item holds', () => {
  it('report keys a transaction holds as conflicts, for a transaction and for a standard write', async () => {
    const holds = new ItemHolds();
    const tx = await holds.hold(['a', 'b'], 'transaction');

    expect((await holds.hold(['c', 'b'], 'transaction')).conflicts).toEqual([1]);
    expect((await holds.hold(['a'], 'write')).conflicts).toEqual([0]);
    tx.release();
    expect((await holds.hold(['a'], 'write')).conflicts).toEqual([]);
  });

  it('queue a transaction behind a standard write of its item instead of failing it', async () => {
    const holds = new ItemHolds();
    const write = await holds.hold(['a'], 'write');
    let taken = false;

    const tx = holds.hold(['a', 'b'], 'transaction').then((result) => {
      taken = true;
      return result;
    });
    await Promise.resolve();
    expect(taken).toBe(false);
    expect(holds.holderOf('b')).toBeUndefined(); // nothing held while waiting
    write.release();

    expect((await tx).conflicts).toEqual([]);
    expect(holds.holderOf('a')).toBe('transaction');
  });

  it('skip the conflicts of a batch and take its other items', async () => {
    const holds = new ItemHolds();
    await holds.hold(['a'], 'transaction');

    const batch = await holds.hold(['a', 'b'], 'write', { skipConflicts: true });

    expect(batch.conflicts).toEqual([0]);
    expect(holds.holderOf('b')).toBe('write');
  });
});

describe("a query's partition key", () => {
  it('is read from the key condition, through attribute names, in either order', () => {
    expect(
      queriedPartitionKey(
        {
          KeyConditionExpression: '#p = :v AND begins_with(sk, :s)',
          ExpressionAttributeNames: { '#p': 'pk' },
          ExpressionAttributeValues: { ':v': { S: 'T#1' }, ':s': { S: 'x' } },
        },
        'pk',
      ),
    ).toBe('S:T#1');
    expect(
      queriedPartitionKey(
        { KeyConditionExpression: '(:v = gsi1pk)', ExpressionAttributeValues: { ':v': { N: '7' } } },
        'gsi1pk',
      ),
    ).toBe('N:7');
    expect(
      queriedPartitionKey(
        { KeyConditions: { pk: { ComparisonOperator: 'EQ', AttributeValueList: [{ S: 'a' }] } } },
        'pk',
      ),
    ).toBe('S:a');
    expect(
      queriedPartitionKey(
        { KeyConditionExpression: 'other = :v', ExpressionAttributeValues: { ':v': { S: 'a' } } },
        'pk',
      ),
    ).toBeUndefined();
  });
});

describe('ConsumedCapacity', () => {
  it("answers the total per table, and with INDEXES the table's and each index's share", () => {
    const lines: ChargeLine[] = [
      { table: 't', index: undefined, partitionKey: 'p', itemKey: 'i', readUnits: 0, writeUnits: 2 },
      { table: 't', index: 'g', partitionKey: 'x', itemKey: undefined, readUnits: 0, writeUnits: 1 },
    ];

    expect(consumedCapacity(lines, 'TOTAL')).toEqual([{ TableName: 't', CapacityUnits: 3, WriteCapacityUnits: 3 }]);
    expect(consumedCapacity(lines, 'INDEXES')).toEqual([
      {
        TableName: 't',
        CapacityUnits: 3,
        WriteCapacityUnits: 3,
        Table: { CapacityUnits: 2, WriteCapacityUnits: 2 },
        GlobalSecondaryIndexes: { g: { CapacityUnits: 1, WriteCapacityUnits: 1 } },
      },
    ]);
  });
});
