import { attributeOfItem, updateExpression } from '../../lambdas/shared/table/update-expression';

describe('an update expression from one object of attributes', () => {
  it('writes SET, if_not_exists, REMOVE and ADD clauses with placeholders derived from the names, leaving undefined values out', () => {
    // Act
    const update = updateExpression({
      set: { status: 'failed', carrierCode: undefined, 'x-y': 2 },
      setIfAbsent: { createdAt: '2026-11-27T00:00:00.000Z' },
      remove: ['gsi2pk'],
      add: { count: 1 },
    });
    // Assess
    expect(update).toEqual({
      UpdateExpression:
        'SET #status = :set_status, #x_y = :set_x_y, #createdAt = if_not_exists(#createdAt, :keep_createdAt) REMOVE ' +
        '#gsi2pk ADD #count :add_count',
      ExpressionAttributeNames: {
        '#status': 'status',
        '#x_y': 'x-y',
        '#createdAt': 'createdAt',
        '#gsi2pk': 'gsi2pk',
        '#count': 'count',
      },
      ExpressionAttributeValues: {
        ':set_status': 'failed',
        ':set_x_y': 2,
        ':keep_createdAt': '2026-11-27T00:00:00.000Z',
        ':add_count': 1,
      },
    });
  });

  it("merges a condition's own placeholders, sharing a name that means the same attribute", () => {
    // Act
    const update = updateExpression(
      { set: { status: 'sent' } },
      { expression: '#status IN (:from0)', values: { ':from0': 'queued' } },
    );
    // Assess
    expect(update).toMatchObject({
      UpdateExpression: 'SET #status = :set_status',
      ConditionExpression: '#status IN (:from0)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':set_status': 'sent', ':from0': 'queued' },
    });
  });

  it('refuses a placeholder meaning two things, an attribute named twice, and an empty update', () => {
    // Act + Assess
    expect(() =>
      updateExpression({ set: { status: 'sent' } }, { expression: '#status = :x', names: { '#status': 'state' } }),
    ).toThrow('#status means two things');
    expect(() => updateExpression({ set: { status: 'sent' }, remove: ['status'] })).toThrow('appears twice');
    expect(() => updateExpression({ set: { status: undefined } })).toThrow('nothing to update');
  });

  it('sets an attribute from another attribute of the item', () => {
    // Act
    const update = updateExpression({
      set: { status: attributeOfItem('statusIfAnswered') },
      remove: ['statusIfAnswered'],
    });
    // Assess
    expect(update).toEqual({
      UpdateExpression: 'SET #status = #statusIfAnswered REMOVE #statusIfAnswered',
      ExpressionAttributeNames: { '#status': 'status', '#statusIfAnswered': 'statusIfAnswered' },
    });
  });
});
