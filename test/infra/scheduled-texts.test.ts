import { FIRING_MEMORY_MB, FIRING_SCHEDULE, FIRING_TIMEOUT } from '../../lib/constructs/scheduled-texts';
import { LATE_AFTER_SECONDS, SCHEDULED_TEXT_LATENESS_METRIC } from '../../lambdas/handlers/scheduled/firing-metrics';
import { actionsOf, dynamoStatements, logicalIdOf, statementsOfFunction, synth } from './support';

type Resource = { Type: string; Properties: Record<string, unknown> };

describe('the firing of scheduled texts on AWS', () => {
  it('runs every minute from an EventBridge rule targeting the firing function', () => {
    // Prepare
    const { stack, template } = synth();
    const firerId = logicalIdOf(stack, stack.scheduledTexts.firer);
    // Act
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter((rule) =>
      JSON.stringify(rule.Properties.Targets).includes(`"${firerId}"`),
    );
    // Assess
    expect(FIRING_SCHEDULE.toMinutes()).toBe(1);
    expect(rules).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({
          ScheduleExpression: 'rate(1 minute)',
          State: 'ENABLED',
          Targets: [
            expect.objectContaining({
              Arn: { 'Fn::GetAtt': [firerId, 'Arn'] },
              RetryPolicy: { MaximumRetryAttempts: 0 },
            }),
          ],
        }),
      }),
    ]);
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [firerId, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
  });

  it('runs one at a time, ends before the next minute, on a full vCPU, sending through Twilio with the secret', () => {
    // Prepare
    const { stack, template } = synth();
    const firerId = logicalIdOf(stack, stack.scheduledTexts.firer);
    // Act
    const fn = (template.toJSON().Resources as Record<string, Resource>)[firerId].Properties;
    // Assess
    expect(fn).toMatchObject({ ReservedConcurrentExecutions: 1, MemorySize: FIRING_MEMORY_MB });
    expect(fn.Timeout).toBe(FIRING_TIMEOUT.toSeconds());
    expect(FIRING_TIMEOUT.toSeconds()).toBeLessThan(FIRING_SCHEDULE.toSeconds());
    expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      CARRIER: 'twilio',
      TWILIO_SECRET_ARN: { Ref: logicalIdOf(stack, stack.carrier.secret as never) },
    });
  });

  it('may query gsi2 (the due list) and do to rows what a send does, nothing else on the table', () => {
    // Prepare
    const { stack, template } = synth();
    const tableArn = { 'Fn::GetAtt': [logicalIdOf(stack, stack.table.table), 'Arn'] };
    // Act
    const statements = dynamoStatements(statementsOfFunction(template, logicalIdOf(stack, stack.scheduledTexts.firer)));
    // Assess
    expect(statements).toEqual([
      {
        Action: [
          'dynamodb:ConditionCheckItem',
          'dynamodb:DeleteItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:Query',
          'dynamodb:UpdateItem',
        ],
        Effect: 'Allow',
        Resource: tableArn,
      },
      {
        Action: 'dynamodb:Query',
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', [tableArn, '/index/gsi2']] },
      },
    ]);
    expect(statements.flatMap(actionsOf)).not.toContain('dynamodb:Scan');
  });

  it('alarms when a run’s latest text went out more than a minute late, and on the function’s errors and throttles', () => {
    // Prepare
    const { stack, template } = synth();
    const fnRef = { Name: 'FunctionName', Value: { Ref: logicalIdOf(stack, stack.scheduledTexts.firer) } };
    // Act
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    const named = (suffix: string) => alarms.filter((a) => a.Properties.AlarmName === `cct-service-dev-${suffix}`);
    // Assess
    expect(named('ScheduledTextsLate')).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({
          MetricName: SCHEDULED_TEXT_LATENESS_METRIC,
          Namespace: 'CctService/dev',
          Dimensions: [{ Name: 'service', Value: 'cct-service' }],
          Statistic: 'Maximum',
          Threshold: LATE_AFTER_SECONDS,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          AlarmActions: [expect.anything()],
        }),
      }),
    ]);
    expect(named('FireScheduledTextsErrors')).toEqual([
      expect.objectContaining({ Properties: expect.objectContaining({ MetricName: 'Errors', Dimensions: [fnRef] }) }),
    ]);
    expect(named('FireScheduledTextsThrottles')).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({ MetricName: 'Throttles', Dimensions: [fnRef] }),
      }),
    ]);
  });
});
