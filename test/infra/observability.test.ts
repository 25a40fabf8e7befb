import { Match } from 'aws-cdk-lib/assertions';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_5XX_RATE_PERCENT } from '../../lib/constructs/observability';
import { ENDPOINTS_DISABLED_METRIC } from '../../lambdas/contexts/webhooks/health-metrics';
import { logicalIdOf, synth } from './support';

type Alarm = {
  Properties: Record<string, unknown> & { AlarmName: string; AlarmActions: unknown[]; OKActions: unknown[] };
};

const alarmsOf = (template: ReturnType<typeof synth>['template']) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Alarm[];

const alarmNamed = (template: ReturnType<typeof synth>['template'], suffix: string): Alarm => {
  const found = alarmsOf(template).filter((a) => a.Properties.AlarmName === `cct-service-dev-${suffix}`);
  expect(found).toHaveLength(1);
  return found[0];
};

describe('observability', () => {
  it('alarms on the API 5xx rate, ignoring periods with too few requests', () => {
    const { template } = synth();

    const alarm = alarmNamed(template, 'Api5xxRate').Properties as unknown as {
      Threshold: number;
      Metrics: { Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
    };

    expect(alarm.Threshold).toBe(API_5XX_RATE_PERCENT);
    const expression = alarm.Metrics.find((m) => m.Expression)!.Expression;
    expect(expression).toMatch(/IF\(requests >= \d+, 100 \* errors \/ requests, 0\)/);
    expect(
      alarm.Metrics.map((m) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort(),
    ).toEqual(['5XXError', 'Count']);
  });

  it('counts authorizer failures from the access log, not from the authorizer Lambda errors that every wrong key causes', () => {
    const { stack, template } = synth();

    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalIdOf(stack, stack.api.accessLogGroup) },
      FilterPattern: Match.stringLikeRegexp('AUTHORIZER_FAILURE.*AUTHORIZER_CONFIGURATION_ERROR'),
      MetricTransformations: [
        Match.objectLike({ MetricName: 'AuthorizerFailures', MetricNamespace: 'CctService/dev', MetricValue: '1' }),
      ],
    });
    expect(alarmNamed(template, 'AuthorizerFailures').Properties).toMatchObject({
      MetricName: 'AuthorizerFailures',
      Namespace: 'CctService/dev',
      Threshold: 1,
    });
    expect(alarmsOf(template).map((a) => a.Properties.AlarmName)).not.toContain('cct-service-dev-AuthorizerErrors');
  });

  it('alarms on errors of every API function and on throttles of every function', () => {
    const { stack, template } = synth();

    for (const route of ROUTES) {
      const fnRef = {
        Name: 'FunctionName',
        Value: { Ref: logicalIdOf(stack, stack.api.routeFunctions[route.operationId]) },
      };
      expect(alarmNamed(template, `${route.operationId}Errors`).Properties).toMatchObject({
        MetricName: 'Errors',
        Dimensions: [fnRef],
      });
      expect(alarmNamed(template, `${route.operationId}Throttles`).Properties).toMatchObject({
        MetricName: 'Throttles',
        Dimensions: [fnRef],
      });
    }
    expect(alarmNamed(template, 'AuthorizerThrottles').Properties).toMatchObject({ MetricName: 'Throttles' });
  });

  it('alarms at the first webhook endpoint the sender disables, on the metric the sender counts under its service dimension', () => {
    const { template } = synth();

    const alarm = alarmNamed(template, 'WebhookEndpointsDisabled').Properties;

    expect(alarm).toMatchObject({
      MetricName: ENDPOINTS_DISABLED_METRIC,
      Namespace: 'CctService/dev',
      Dimensions: [{ Name: 'service', Value: 'cct-service' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // The sender's functions publish under exactly that namespace and service name.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^Webhook sender'),
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'cct-service',
          POWERTOOLS_METRICS_NAMESPACE: 'CctService/dev',
        }),
      },
    });
  });

  it('notifies a TLS-only topic when an alarm fires and when it recovers', () => {
    const { stack, template } = synth();

    const topic = { Ref: logicalIdOf(stack, stack.observability.alarmTopic) };
    for (const alarm of alarmsOf(template)) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [topic],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('subscribes the alarm e-mail only when one is configured', () => {
    const without = synth().template;
    const withEmail = synth({ alarmEmail: 'ops@example.com' }).template;

    without.resourceCountIs('AWS::SNS::Subscription', 0);
    withEmail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('draws a dashboard of the API, the functions and the table', () => {
    const { template } = synth();

    const dashboard = Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties;
    const body = JSON.stringify(dashboard.DashboardBody);

    expect(dashboard.DashboardName).toBe('cct-service-dev');
    for (const title of [
      'API requests and errors',
      'API latency',
      'Lambda errors',
      'Lambda throttles',
      'DynamoDB throttled requests',
    ]) {
      expect(body).toContain(title);
    }
  });
});
