import { KnownImages, requiresNewItem } from '../../local/dynamodb-limits/images-before';
import type { TableSchema } from '../../local/dynamodb-limits/table-schema';

const table: TableSchema = {
  name: 'limits',
  arn: 'arn:aws:dynamodb:local:000000000000:table/limits',
  key: { partitionKey: 'pk', sortKey: 'sk' },
  indexes: [],
};

describe('requiresNewItem: a write the engine may take to find no item', () => {
  it.each([
    ['attribute_not_exists(pk)', undefined],
    [' attribute_not_exists ( #k ) ', { '#k': 'pk' }],
  ])('takes %j, the whole condition on the partition key', (condition, names) => {
    expect(requiresNewItem(table, { ConditionExpression: condition, ExpressionAttributeNames: names })).toBe(true);
  });

  it.each([
    ['no condition', {}],
    ['another attribute', { ConditionExpression: 'attribute_not_exists(sk)' }],
    [
      'a name for another attribute',
      { ConditionExpression: 'attribute_not_exists(#k)', ExpressionAttributeNames: { '#k': 'v' } },
    ],
    ['an unknown name', { ConditionExpression: 'attribute_not_exists(#k)' }],
    ['a condition with more to it', { ConditionExpression: 'attribute_not_exists(pk) OR tenantId = :t' }],
    ['a condition that requires the item', { ConditionExpression: 'attribute_exists(pk)' }],
  ])('does not take %s', (_, input) => {
    expect(requiresNewItem(table, input)).toBe(false);
  });
});

describe('KnownImages: the images the engine left', () => {
  const item = { pk: { S: 'a' }, sk: { S: '1' }, v: { S: 'x' } };

  it('answers an image recorded, null for an item recorded absent, undefined for one never recorded', () => {
    const images = new KnownImages(10);

    images.record('a', item);
    images.record('b', undefined);

    expect(images.get('a', undefined, 0)).toEqual(item);
    expect(images.get('b', undefined, 0)).toBeNull();
    expect(images.get('c', undefined, 0)).toBeUndefined();
  });

  it('forgets an image, and the images of a table deleted', () => {
    const images = new KnownImages(10);
    images.record('db\u0001gone\u0001a', item);
    images.record('db\u0001kept\u0001a', item);
    images.record('lost', item);

    images.forget('lost');
    images.dropTable('db\u0001gone\u0001');

    expect(images.get('lost', undefined, 0)).toBeUndefined();
    expect(images.get('db\u0001gone\u0001a', undefined, 0)).toBeUndefined();
    expect(images.get('db\u0001kept\u0001a', undefined, 0)).toEqual(item);
  });

  it('does not trust an image whose TTL attribute has passed, as DynamoDB may have expired the item', () => {
    const images = new KnownImages(10);
    images.record('expiring', { ...item, expiresAt: { N: '1000' } });

    expect(images.get('expiring', 'expiresAt', 999)).toEqual({ ...item, expiresAt: { N: '1000' } });
    expect(images.get('expiring', 'expiresAt', 1000)).toBeUndefined();
    expect(images.size).toBe(0);
  });

  it('drops the least recently used image beyond its capacity', () => {
    const images = new KnownImages(2);
    images.record('a', item);
    images.record('b', item);

    images.get('a', undefined, 0);
    images.record('c', item);

    expect(images.get('b', undefined, 0)).toBeUndefined();
    expect(images.get('a', undefined, 0)).toEqual(item);
    expect(images.get('c', undefined, 0)).toEqual(item);
  });

  describe('with every write seen since the tables were empty', () => {
    it('knows an item it never wrote is absent; one whose image it dropped or whose write it lost may exist', () => {
      const images = new KnownImages(1, true);
      images.record('dropped', item);
      images.record('lost', item);
      images.forget('lost');

      expect(images.get('never written', undefined, 0)).toBeNull();
      expect(images.get('dropped', undefined, 0)).toBeUndefined();
      expect(images.get('lost', undefined, 0)).toBeUndefined();
    });

    it('knows again an item it writes after dropping it, and still knows a dropped absent one is absent', () => {
      const images = new KnownImages(1, true);
      images.record('deleted', undefined);
      images.record('rewritten', item);
      images.record('other', item);

      images.record('rewritten', { ...item, v: { S: 'y' } });

      expect(images.get('deleted', undefined, 0)).toBeNull();
      expect(images.get('rewritten', undefined, 0)).toEqual({ ...item, v: { S: 'y' } });
    });

    it('knows a table deleted holds nothing, and still knows the items of the others', () => {
      const images = new KnownImages(1, true);
      images.record('db\u0001gone\u0001dropped', item);
      images.record('db\u0001kept\u0001dropped', item);
      images.record('db\u0001kept\u0001known', item);

      images.dropTable('db\u0001gone\u0001');

      expect(images.get('db\u0001gone\u0001dropped', undefined, 0)).toBeNull();
      expect(images.get('db\u0001kept\u0001dropped', undefined, 0)).toBeUndefined();
      expect(images.get('db\u0001kept\u0001known', undefined, 0)).toEqual(item);
    });
  });
});
