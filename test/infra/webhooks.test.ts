import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { defaultConfig } from '../../lib/config';
import { ServiceStack, WEBHOOK_SOURCES } from '../../lib/service-stack';
import { ROUTER_MEMORY_MB, SENDER_MAX_CONCURRENCY, SENDER_MEMORY_MB } from '../../lib/constructs/webhook-pipeline';
import { actionsOf, buildStack, dynamoStatements, logicalIdOf, statementsOfFunction, synth, testApp } from './support';

/** The stack without its pipeline. */
function withoutWebhooks() {
  const stack = new ServiceStack(testApp(), 'CctService-dev', { config: defaultConfig(), webhooks: false });
  return { stack, template: Template.fromStack(stack) };
}

describe('the webhook pipeline', () => {
  // The stack with its real pipeline: the default.
  const { stack, template } = synth();
  const pipeline = stack.webhooks!;
  const ref = (construct: Parameters<typeof logicalIdOf>[1]) => logicalIdOf(stack, construct);

  it('feeds the router from the table stream, filtered, with partial batch failures and a failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ref(pipeline.router) },
      EventSourceArn: { 'Fn::GetAtt': [ref(stack.table.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      // Only calls reaching a terminal status, inbound texts, ready voicemails and redelivery requests wake it.
      FilterCriteria: {
        Filters: WEBHOOK_SOURCES.routerFilterPatterns.map((pattern) => ({ Pattern: JSON.stringify(pattern) })),
      },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ref(pipeline.routerFailures), 'Arn'] } } },
    });
  });

  it('routes batches of 100 records, two batches of a shard at once, within a second of batching (docs/capacity.md, events per shard)', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ref(pipeline.router) },
      BatchSize: 100,
      ParallelizationFactor: 2,
      MaximumBatchingWindowInSeconds: 1,
    });
  });

  it('gives the router and the sender 1,024 MB, the CPU their events per second are sized on', () => {
    expect([ROUTER_MEMORY_MB, SENDER_MEMORY_MB]).toEqual([1024, 1024]);
    for (const fn of [pipeline.router, pipeline.sender]) {
      expect(template.toJSON().Resources[ref(fn)].Properties.MemorySize).toBe(1024);
    }
  });

  it('feeds the sender from the delivery queue in batches of 10 with a concurrency ceiling of 50 (500 attempts in flight)', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ref(pipeline.sender) },
      EventSourceArn: { 'Fn::GetAtt': [ref(pipeline.queue), 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 50 },
    });
    expect(SENDER_MAX_CONCURRENCY).toBe(50);
  });

  it('moves an unprocessable delivery to the dead-letter queue after 5 receives, with visibility six times the sender timeout', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [ref(pipeline.deadLetterQueue), 'Arn'] },
        maxReceiveCount: 5,
      },
      VisibilityTimeout: 180,
      SqsManagedSseEnabled: true,
    });
  });

  it('tells both functions the queue URL', () => {
    for (const fn of [pipeline.router, pipeline.sender]) {
      expect(template.toJSON().Resources[ref(fn)].Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({
        Ref: ref(pipeline.queue),
      });
    }
  });

  it('lets the router read the stream, write deliveries and queue them; the sender record attempts and re-queue', () => {
    const router = statementsOfFunction(template, ref(pipeline.router));
    const sender = statementsOfFunction(template, ref(pipeline.sender));
    const tableActions = (statements: typeof router) =>
      [
        ...new Set(
          dynamoStatements(statements)
            .filter(
              (s) => JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': [ref(stack.table.table), 'Arn'] }),
            )
            .flatMap(actionsOf),
        ),
      ].sort();

    expect(tableActions(router)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(tableActions(sender)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:UpdateItem']);
    const streamStatement = router.find((s) => actionsOf(s).includes('dynamodb:GetRecords'))!;
    expect(streamStatement.Resource).toEqual({ 'Fn::GetAtt': [ref(stack.table.table), 'StreamArn'] });
    const sendTargets = (statements: typeof router) =>
      statements
        .filter((s) => actionsOf(s).includes('sqs:SendMessage'))
        .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
    const arn = (queue: Parameters<typeof ref>[0]) => ({ 'Fn::GetAtt': [ref(queue), 'Arn'] });
    // The router also reports batches it gives up on to its failure queue (the event source's on-failure destination).
    expect(sendTargets(router)).toEqual(expect.arrayContaining([arn(pipeline.queue), arn(pipeline.routerFailures)]));
    expect(sendTargets(router)).toHaveLength(2);
    expect(sendTargets(sender)).toEqual([arn(pipeline.queue)]);
    for (const statements of [router, sender]) {
      expect(statements.flatMap(actionsOf).filter((a) => a.includes('*'))).toEqual([]);
    }
  });

  it('alarms when the router reads the table stream more than a minute behind', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'cct-service-dev-WebhookRouterIteratorAge',
      MetricName: 'IteratorAge',
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ref(pipeline.router) } }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 60_000,
      EvaluationPeriods: 2,
    });
  });

  it('alarms on both functions and on anything reaching a dead-letter queue', () => {
    const names = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties.AlarmName);

    expect(names).toEqual(
      expect.arrayContaining([
        'cct-service-dev-WebhookRouterErrors',
        'cct-service-dev-WebhookSenderErrors',
        'cct-service-dev-WebhookDeadLettersNotEmpty',
        'cct-service-dev-WebhookRouterFailuresNotEmpty',
      ]),
    );
  });

  it('can be left out (webhooks: false)', () => {
    const { stack: without, template: plain } = withoutWebhooks();

    expect(without.webhooks).toBeUndefined();
    plain.resourceCountIs('AWS::SQS::Queue', 0);
  });

  it('passes cdk-nag', () => {
    const { app } = buildStack();
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

    expect(() => app.synth()).not.toThrow();
  });
});
