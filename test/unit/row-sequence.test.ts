import { FIRST_ROW_SEQUENCE, rowSequenceOf, withRowSequenceBump } from '../../lambdas/shared/table/row-sequence';
import { updateExpression } from '../../lambdas/shared/table/update-expression';

describe('the per-row sequence number', () => {
  it('adds one to the sequence in the same update, keeping its other parts', () => {
    // Act
    const update = updateExpression(withRowSequenceBump({ set: { status: 'sent' }, remove: ['gsi2pk'] }));

    // Assess
    expect(update).toEqual({
      UpdateExpression: 'SET #status = :set_status REMOVE #gsi2pk ADD #sequence :add_sequence',
      ExpressionAttributeNames: { '#status': 'status', '#gsi2pk': 'gsi2pk', '#sequence': 'sequence' },
      ExpressionAttributeValues: { ':set_status': 'sent', ':add_sequence': 1 },
    });
  });

  it('joins the ADD the update already has (DynamoDB allows each clause once)', () => {
    // Act + Assess
    expect(updateExpression(withRowSequenceBump({ add: { count: 1 } })).UpdateExpression).toBe(
      'ADD #count :add_count, #sequence :add_sequence',
    );
  });

  it('starts new rows at 1 and reads rows written before it as 0', () => {
    expect(rowSequenceOf({ ...FIRST_ROW_SEQUENCE })).toBe(1);
    expect(rowSequenceOf({ sequence: 7 })).toBe(7);
    expect(rowSequenceOf({})).toBe(0);
    expect(rowSequenceOf({ sequence: 'x' })).toBe(0);
    expect(rowSequenceOf(undefined)).toBe(0);
  });
});
