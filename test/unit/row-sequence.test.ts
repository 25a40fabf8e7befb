import { FIRST_ROW_SEQUENCE, rowSequenceOf, withRowSequenceBump } from '../../lambdas/shared/table/row-sequence';

describe('the per-row sequence number', () => {
  it('adds an ADD clause to an update, keeping its names, values and other clauses', () => {
    // Act
    const update = withRowSequenceBump({
      TableName: 't',
      UpdateExpression: 'SET #status = :status REMOVE #gsi2pk',
      ExpressionAttributeNames: { '#status': 'status', '#gsi2pk': 'gsi2pk' },
      ExpressionAttributeValues: { ':status': 'sent' },
    });

    // Assess
    expect(update).toEqual({
      TableName: 't',
      UpdateExpression: 'SET #status = :status REMOVE #gsi2pk ADD #rowSequence :rowSequenceStep',
      ExpressionAttributeNames: { '#status': 'status', '#gsi2pk': 'gsi2pk', '#rowSequence': 'sequence' },
      ExpressionAttributeValues: { ':status': 'sent', ':rowSequenceStep': 1 },
    });
  });

  it('joins an ADD clause the update already has (DynamoDB allows each clause once), and leaves placeholders alone', () => {
    expect(withRowSequenceBump({ UpdateExpression: 'ADD #count :one SET #address = :a' }).UpdateExpression).toBe(
      'ADD #rowSequence :rowSequenceStep, #count :one SET #address = :a',
    );
    expect(withRowSequenceBump({ UpdateExpression: 'SET #ADDRESS = :a' }).UpdateExpression).toBe('SET #ADDRESS = :a ADD #rowSequence :rowSequenceStep');
  });

  it('starts new rows at 1 and reads rows written before it as 0', () => {
    expect(rowSequenceOf({ ...FIRST_ROW_SEQUENCE })).toBe(1);
    expect(rowSequenceOf({ sequence: 7 })).toBe(7);
    expect(rowSequenceOf({})).toBe(0);
    expect(rowSequenceOf({ sequence: 'x' })).toBe(0);
    expect(rowSequenceOf(undefined)).toBe(0);
  });
});
