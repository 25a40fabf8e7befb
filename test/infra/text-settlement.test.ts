import { SETTLEMENT_SCHEDULE } from '../../lib/constructs/text-settlement';
import { actionsOf, dynamoStatements, logicalIdOf, statementsOfFunction, synth } from './support';

describe('the settlement sweep of texts with an unknown carrier outcome', () => {
  it('runs on an EventBridge schedule every five minutes, targeting the sweep function without retries', () => {
    // Prepare
    const { stack, template } = synth();
    const sweeperId = logicalIdOf(stack, stack.textSettlement.sweeper);
    // Act
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter((rule) =>
      JSON.stringify(rule.Properties.Targets).includes(`"${sweeperId}"`),
    );
    // Assess
    expect(SETTLEMENT_SCHEDULE.toMinutes()).toBe(5);
    expect(rules).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({
          ScheduleExpression: 'rate(5 minutes)',
          State: 'ENABLED',
          Targets: [
            expect.objectContaining({
              Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] },
              RetryPolicy: { MaximumRetryAttempts: 0 },
            }),
          ],
        }),
      }),
    ]);
  });

  it('may query only gsi2 (the unsettled worklist), read and update rows and make spend shards, nothing else', () => {
    // Prepare
    const { stack, template } = synth();
    const tableId = logicalIdOf(stack, stack.table.table);
    // Act
    const statements = dynamoStatements(
      statementsOfFunction(template, logicalIdOf(stack, stack.textSettlement.sweeper)),
    );
    // Assess
    const actions = [...new Set(statements.flatMap(actionsOf))].sort();
    expect(actions).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
    const queryResources = JSON.stringify(
      statements.filter((s) => actionsOf(s).includes('dynamodb:Query')).map((s) => s.Resource),
    );
    expect(queryResources).toContain('/index/gsi2');
    expect(queryResources).not.toContain('gsi1');
    expect(queryResources).toContain(tableId);
  });
});
