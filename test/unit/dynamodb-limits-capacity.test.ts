import {
  failedConditionWriteUnits,
  indexWriteCharge,
  itemWriteUnits,
  keyReadUnits,
  pageReadUnits,
  type IndexEntryImage,
} from '../../local/dynamodb-limits/capacity';

/**
 * The unit rules, each against the example AWS documents for it (DynamoDB Developer Guide,
 * "Capacity unit consumption" and "Read and write operations", "Capacity management for
 * transactions", "Global secondary indexes: write capacity units"). KB are 1,024 bytes.
 */
const KB = 1024;

describe('reads', () => {
  it('rounds an item up to 4 KB: a 3.5 KB item is 1 unit strongly consistent, half that eventually, twice that transactionally', () => {
    expect(keyReadUnits(3.5 * KB, 'strong')).toBe(1);
    expect(keyReadUnits(3.5 * KB, 'eventual')).toBe(0.5);
    expect(keyReadUnits(3.5 * KB, 'transactional')).toBe(2);
  });

  it('rounds a 10 KB item to 12 KB (3 units); an 8 KB item is 2 units strong, 1 eventual, 4 transactional', () => {
    expect(keyReadUnits(10 * KB, 'strong')).toBe(3);
    expect([
      keyReadUnits(8 * KB, 'strong'),
      keyReadUnits(8 * KB, 'eventual'),
      keyReadUnits(8 * KB, 'transactional'),
    ]).toEqual([2, 1, 4]);
  });

  it('charges a key that finds nothing one block: 1 unit strongly consistent, 0.5 eventually', () => {
    expect(keyReadUnits(undefined, 'strong')).toBe(1);
    expect(keyReadUnits(undefined, 'eventual')).toBe(0.5);
  });

  it('rounds each key of a batch on its own: a 1.5 KB and a 6.5 KB item are 12 KB (3 units), not 8 KB', () => {
    expect(keyReadUnits(1.5 * KB, 'strong') + keyReadUnits(6.5 * KB, 'strong')).toBe(3);
  });

  it('sums a query page before rounding: 10 items of 40.8 KB are 44 KB, 11 units (5.5 eventually)', () => {
    expect(pageReadUnits(Math.round(40.8 * KB), 'strong')).toBe(11);
    expect(pageReadUnits(Math.round(40.8 * KB), 'eventual')).toBe(5.5);
  });

  it('charges 80 KB read eventually consistent 10 units, and a page that examined nothing one block', () => {
    expect(pageReadUnits(80 * KB, 'eventual')).toBe(10);
    expect(pageReadUnits(0, 'eventual')).toBe(0.5);
  });
});

describe('writes', () => {
  it('rounds a write up to 1 KB of the larger image: putting or deleting 1.6 KB is 2 units', () => {
    expect(itemWriteUnits(undefined, 1.6 * KB, 'standard')).toBe(2);
    expect(itemWriteUnits(1.6 * KB, undefined, 'standard')).toBe(2);
    expect(itemWriteUnits(3 * KB, 0.5 * KB, 'standard')).toBe(3);
  });

  it('rounds each request of a batch on its own: a 500 byte and a 3.5 KB item are 5 KB, 5 units', () => {
    expect(itemWriteUnits(undefined, 500, 'standard') + itemWriteUnits(undefined, 3.5 * KB, 'standard')).toBe(5);
  });

  it('charges a failed conditional write the existing item (1 KB: 1 unit, 2 KB: 2) or 1 unit when there is none', () => {
    expect(failedConditionWriteUnits(1 * KB)).toBe(1);
    expect(failedConditionWriteUnits(2 * KB)).toBe(2);
    expect(failedConditionWriteUnits(undefined)).toBe(1);
  });

  it('doubles transactional writes: a transaction writing three 500-byte items is 6 units', () => {
    expect(3 * itemWriteUnits(undefined, 500, 'transactional')).toBe(6);
  });

  it('charges deleting nothing one unit', () => {
    expect(itemWriteUnits(undefined, undefined, 'standard')).toBe(1);
  });
});

describe('index writes', () => {
  const entry = (key: string, bytes: number, content = key): IndexEntryImage => ({
    key: `${key}\u0000`,
    partitionKey: key,
    bytes,
    content,
  });

  it("charges 1 write to enter the index and 1 to leave it, in the entry's index partition", () => {
    expect(indexWriteCharge(undefined, entry('A', 100))).toEqual({
      units: 1,
      writes: [{ partitionKey: 'A', units: 1 }],
    });
    expect(indexWriteCharge(entry('A', 100), undefined)).toEqual({
      units: 1,
      writes: [{ partitionKey: 'A', units: 1 }],
    });
  });

  it('charges 2 writes when the index key changes from A to B: delete the old entry, put the new', () => {
    expect(indexWriteCharge(entry('A', 100), entry('B', 100))).toEqual({
      units: 2,
      writes: [
        { partitionKey: 'A', units: 1 },
        { partitionKey: 'B', units: 1 },
      ],
    });
  });

  it('charges 1 write when only projected attributes change, and nothing when the entry is unchanged or absent', () => {
    expect(indexWriteCharge(entry('A', 100, 'old'), entry('A', 100, 'new')).units).toBe(1);
    expect(indexWriteCharge(entry('A', 100), entry('A', 100)).units).toBe(0);
    expect(indexWriteCharge(undefined, undefined).units).toBe(0);
  });

  it('rounds an index entry larger than 1 KB up, like a table write', () => {
    expect(indexWriteCharge(undefined, entry('A', 2.5 * KB)).units).toBe(3);
  });
});
