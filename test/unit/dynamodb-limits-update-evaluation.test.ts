import type { WireItem } from '../../local/dynamodb-limits/item-size';
import { updatedImage } from '../../local/dynamodb-limits/update-evaluation';

const key: WireItem = { pk: { S: 'T#1' }, sk: { S: 'THREAD' } };
const before: WireItem = {
  ...key,
  count: { N: '41' },
  name: { S: 'old' },
  tags: { SS: ['a', 'b'] },
  log: { L: [{ S: 'first' }] },
  gone: { BOOL: true },
};

describe('updatedImage: the item an update leaves, computed where it can be exactly', () => {
  it.each([
    [
      'SET to values and REMOVE',
      {
        UpdateExpression: 'SET #n = :n, fresh = :f REMOVE gone',
        ExpressionAttributeNames: { '#n': 'name' },
        ExpressionAttributeValues: { ':n': { S: 'new' }, ':f': { N: '7' } },
      },
      { ...before, name: { S: 'new' }, fresh: { N: '7' }, gone: undefined },
    ],
    [
      'an attribute incremented from its own value',
      {
        UpdateExpression: 'SET #c = #c + :one',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':one': { N: '1' } },
      },
      { ...before, count: { N: '42' } },
    ],
    [
      'if_not_exists on an absent attribute, minus a value',
      {
        UpdateExpression: 'SET total = if_not_exists(total, :zero) - :five',
        ExpressionAttributeValues: { ':zero': { N: '0' }, ':five': { N: '5' } },
      },
      { ...before, total: { N: '-5' } },
    ],
    [
      'if_not_exists on a present attribute',
      {
        UpdateExpression: 'SET #n = if_not_exists(#n, :n)',
        ExpressionAttributeNames: { '#n': 'name' },
        ExpressionAttributeValues: { ':n': { S: 'new' } },
      },
      before,
    ],
    [
      'list_append',
      {
        UpdateExpression: 'SET log = list_append(log, :more)',
        ExpressionAttributeValues: { ':more': { L: [{ S: 'second' }] } },
      },
      { ...before, log: { L: [{ S: 'first' }, { S: 'second' }] } },
    ],
    [
      'ADD to a number, to a set, and to an absent attribute',
      {
        UpdateExpression: 'ADD #c :big, tags :t, seen :one',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':big': { N: '9007199254740993' }, ':t': { SS: ['b', 'c'] }, ':one': { N: '1' } },
      },
      { ...before, count: { N: '9007199254741034' }, tags: { SS: ['a', 'b', 'c'] }, seen: { N: '1' } },
    ],
    [
      'DELETE from a set, and a set left empty removed',
      { UpdateExpression: 'DELETE tags :t', ExpressionAttributeValues: { ':t': { SS: ['a', 'b'] } } },
      { ...before, tags: undefined },
    ],
  ])('computes %s', (_, update, expected) => {
    const after = updatedImage(key, before, update);

    expect(after).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it('creates an absent item from its key, with keywords in lower case', () => {
    const after = updatedImage(key, undefined, {
      UpdateExpression: 'set v = :v',
      ExpressionAttributeValues: { ':v': { S: 'x' } },
    });

    expect(after).toEqual({ ...key, v: { S: 'x' } });
  });

  it.each([
    ['a nested path', { UpdateExpression: 'SET a.b = :v', ExpressionAttributeValues: { ':v': { S: 'x' } } }],
    ['a list element', { UpdateExpression: 'REMOVE log[0]' }],
    [
      'a decimal sum',
      {
        UpdateExpression: 'SET #c = #c + :h',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':h': { N: '0.5' } },
      },
    ],
    [
      'a number not written as DynamoDB stores it',
      { UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': { N: '1.50' } } },
    ],
    [
      'an operand another action changes',
      { UpdateExpression: 'SET a = :v, b = a', ExpressionAttributeValues: { ':v': { S: 'x' } } },
    ],
    ['a function it does not know', { UpdateExpression: 'SET v = size(log)' }],
    ['a key attribute', { UpdateExpression: 'SET sk = :v', ExpressionAttributeValues: { ':v': { S: 'x' } } }],
    ['an unknown name', { UpdateExpression: 'SET #x = :v', ExpressionAttributeValues: { ':v': { S: 'x' } } }],
    ['an unknown value', { UpdateExpression: 'SET v = :missing' }],
    ['the legacy AttributeUpdates', { AttributeUpdates: { v: { Action: 'PUT', Value: { S: 'x' } } } }],
    ['a malformed expression', { UpdateExpression: 'SET v :v', ExpressionAttributeValues: { ':v': { S: 'x' } } }],
  ])('leaves %s to a read', (_, update) => {
    expect(updatedImage(key, before, update)).toBeUndefined();
  });
});
