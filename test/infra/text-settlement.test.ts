import { SETTLEMENT_FAILED_METRIC } from '../../lambdas/contexts/texting/settlement-grace';
import { SWEEP_DEFAULTS } from '../../lambdas/contexts/texting/settlement';
import { SWEEP_TAIL_MS } from '../../lambdas/handlers/scheduled/settle-texts';
import { SETTLEMENT_SCHEDULE } from '../../lib/constructs/text-settlement';
import { actionsOf, dynamoStatements, logicalIdOf, statementsOfFunction, synth } from './support';

describe('the settlement sweep of texts with an unknown carrier outcome', () => {
  it('runs on an EventBridge schedule every minute, targeting the sweep function without retries', () => {
    // Prepare
    const { stack, template } = synth();
    const sweeperId = logicalIdOf(stack, stack.textSettlement.sweeper);
    // Act
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter((rule) =>
      JSON.stringify(rule.Properties.Targets).includes(`"${sweeperId}"`),
    );
    // Assess
    expect(SETTLEMENT_SCHEDULE.toMinutes()).toBe(1);
    expect(rules).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({
          ScheduleExpression: 'rate(1 minute)',
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

  it('gives a run a budget that ends before the next run starts, and time after it for the texts under way', () => {
    // Prepare
    const { stack, template } = synth();
    // Act
    const fn = template.findResources('AWS::Lambda::Function')[logicalIdOf(stack, stack.textSettlement.sweeper)];
    const timeoutMs = (fn.Properties.Timeout as number) * 1000;
    // Assess
    expect(SWEEP_DEFAULTS.budgetMs).toBeLessThan(SETTLEMENT_SCHEDULE.toMilliseconds());
    expect(SWEEP_DEFAULTS.budgetMs + SWEEP_TAIL_MS).toBeLessThanOrEqual(timeoutMs);
  });

  it('alarms at the first text the sweep could not settle, on the metric the sweep counts', () => {
    // Prepare
    const { template } = synth();
    // Act
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      String(alarm.Properties.AlarmName).endsWith('-TextsSettlementFailed'),
    );
    // Assess
    expect(alarms).toHaveLength(1);
    expect(alarms[0]!.Properties).toMatchObject({
      MetricName: SETTLEMENT_FAILED_METRIC,
      Namespace: 'CctService/dev',
      Dimensions: [{ Name: 'service', Value: 'cct-service' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });
});
