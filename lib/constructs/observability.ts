import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CALLBACK_PER_ADDRESS_RULE_NAME, UNSIGNED_CALLBACK_RULE_NAME } from './network-rate-limit';
import type { PublicApi } from './public-api';
import type { ServiceTable } from './table';

export type ObservabilityProps = {
  stage: string;
  alarmEmail?: string;
  api: PublicApi;
  table: ServiceTable;
};

/** Alarm on a 5xx share of at least this percentage... */
export const API_5XX_RATE_PERCENT = 5;
/** ...but only once a period has this many requests, so one failed request of two does not page anyone. */
export const API_5XX_MIN_REQUESTS = 10;

const PERIOD = Duration.minutes(5);

export type MonitorFunctionOptions = {
  /**
   * Alarm on the function's Lambda `Errors`. False for the TOKEN authorizer, which reports every
   * refused key as an error by design (see `PublicApi.metricAuthorizerFailures`).
   */
  alarmOnErrors?: boolean;
};

/**
 * Alarms, the topic they notify and the dashboard. Other parts register what they want watched
 * (`monitorFunction`, `monitorDeadLetterQueue`), so a new pipeline gets alarms by one call.
 */
/** A metric the functions emit through Powertools: their namespace, name and `service` dimension. */
type BusinessMetric = { namespace: string; metricName: string; service: string; description: string };

export class Observability extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  private readonly prefix: string;
  private readonly lambdaErrors: cloudwatch.GraphWidget;
  private readonly lambdaThrottles: cloudwatch.GraphWidget;
  private readonly lambdaDuration: cloudwatch.GraphWidget;
  private readonly queueWidget: cloudwatch.GraphWidget;
  private queuesShown = false;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.prefix = `cct-service-${props.stage}`;

    // Alarm messages carry resource names and numbers, no customer data, so SNS's default
    // encryption at rest is enough; publishers must use TLS.
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `${this.prefix} alarms`,
      enforceSSL: true,
    });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: this.prefix,
      defaultInterval: Duration.hours(3),
    });

    this.watchApi(props.api);

    this.lambdaErrors = new cloudwatch.GraphWidget({ title: 'Lambda errors (Sum)', width: 8 });
    this.lambdaThrottles = new cloudwatch.GraphWidget({ title: 'Lambda throttles (Sum)', width: 8 });
    this.lambdaDuration = new cloudwatch.GraphWidget({ title: 'Lambda duration (p99, ms)', width: 8 });
    this.dashboard.addWidgets(this.lambdaErrors, this.lambdaThrottles, this.lambdaDuration);

    this.watchTable(props.table);

    this.queueWidget = new cloudwatch.GraphWidget({ title: 'Dead-letter queues (visible messages)', width: 12 });
  }

  /** Alarms on a function's throttles and (unless told otherwise) errors, and its dashboard lines. */
  monitorFunction(name: string, fn: IFunction, options: MonitorFunctionOptions = {}): void {
    const errors = fn.metricErrors({ period: PERIOD, statistic: 'Sum' });
    const throttles = fn.metricThrottles({ period: PERIOD, statistic: 'Sum' });
    // Labelled for the graphs only: an alarm on a labelled metric renders as metric math.
    this.lambdaErrors.addLeftMetric(errors.with({ label: name }));
    this.lambdaThrottles.addLeftMetric(throttles.with({ label: name }));
    this.lambdaDuration.addLeftMetric(fn.metricDuration({ period: PERIOD, statistic: 'p99', label: name }));

    if (options.alarmOnErrors ?? true) {
      // API handlers turn every expected failure into a response, so a Lambda error is a crash,
      // a timeout or a failed init (e.g. missing configuration): always worth a look.
      this.addAlarm(`${name}Errors`, errors, {
        description: `${name}: the function failed (crash, timeout or init error) at least once in 5 minutes`,
        threshold: 1,
      });
    }
    // Throttling means requests were refused for lack of concurrency: raise the account's limit.
    this.addAlarm(`${name}Throttles`, throttles, {
      description: `${name}: Lambda throttled invocations (concurrency limit reached)`,
      threshold: 1,
    });
  }

  /**
   * Extension point for the webhook pipeline: anything in a dead-letter queue is a delivery the
   * service gave up on, so one message alarms.
   */
  monitorDeadLetterQueue(name: string, queue: sqs.IQueue): void {
    const visible = queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' });
    // The widget joins the dashboard with the first queue, so a stack without queues shows no empty graph.
    if (!this.queuesShown) {
      this.dashboard.addWidgets(this.queueWidget);
      this.queuesShown = true;
    }
    this.queueWidget.addLeftMetric(visible.with({ label: name }));
    this.addAlarm(`${name}NotEmpty`, visible, {
      description: `${name}: messages reached the dead-letter queue`,
      threshold: 1,
    });
  }

  /**
   * A stream consumer falling behind: the age of the newest record it has read. The spec lets an
   * event arrive up to a minute after its change, so a consumer a minute behind for two periods
   * in a row is breaking that promise.
   */
  monitorStreamConsumer(name: string, fn: IFunction): void {
    const iteratorAge = fn.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' });
    this.addAlarm(`${name}IteratorAge`, iteratorAge, {
      description: `${name}: the table stream is read more than a minute behind (events arrive late)`,
      threshold: 60_000,
      evaluationPeriods: 2,
    });
  }

  /**
   * A business metric the functions count (Powertools' embedded metric format: their namespace and
   * the `service` dimension): one occurrence in 5 minutes alarms, and the dashboard graphs it.
   */
  monitorBusinessCount(name: string, metric: BusinessMetric): cloudwatch.Alarm {
    return this.monitorBusinessMetric(name, metric, 'Sum', 1);
  }

  /**
   * A business measurement the functions emit (their namespace and `service` dimension): alarms when its largest
   * value in 5 minutes reaches `threshold`, and the dashboard graphs it.
   */
  monitorBusinessMaximum(name: string, metric: BusinessMetric & { threshold: number }): cloudwatch.Alarm {
    return this.monitorBusinessMetric(name, metric, 'Maximum', metric.threshold);
  }

  private monitorBusinessMetric(
    name: string,
    metric: BusinessMetric,
    statistic: 'Sum' | 'Maximum',
    threshold: number,
  ): cloudwatch.Alarm {
    const measured = new cloudwatch.Metric({
      namespace: metric.namespace,
      metricName: metric.metricName,
      dimensionsMap: { service: metric.service },
      statistic,
      period: PERIOD,
    });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: `${name} (${statistic})`, left: [measured.with({ label: name })], width: 8 }),
    );
    return this.addAlarm(name, measured, { description: metric.description, threshold });
  }

  /** An alarm that notifies the topic when it fires and when it recovers. */
  addAlarm(
    id: string,
    metric: cloudwatch.IMetric,
    options: { description: string; threshold: number; evaluationPeriods?: number; datapointsToAlarm?: number },
  ): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
      alarmName: `${this.prefix}-${id}`,
      alarmDescription: options.description,
      metric,
      threshold: options.threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      datapointsToAlarm: options.datapointsToAlarm,
      // No data means no traffic, which is not a failure.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    alarm.addOkAction(new SnsAction(this.alarmTopic));
    return alarm;
  }

  private watchApi(publicApi: PublicApi): void {
    const { api } = publicApi;
    const requests = api.metricCount({ period: PERIOD, statistic: 'Sum', label: 'Requests' });
    const serverErrors = api.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' });
    const clientErrors = api.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' });

    const serverErrorRate = new cloudwatch.MathExpression({
      expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: PERIOD,
      label: '5xx rate (%)',
    });
    this.addAlarm('Api5xxRate', serverErrorRate, {
      description: `At least ${API_5XX_RATE_PERCENT} % of API requests answered 5xx in 2 of the last 3 five-minute periods`,
      threshold: API_5XX_RATE_PERCENT,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    const authorizerFailures = publicApi.metricAuthorizerFailures();
    this.addAlarm('AuthorizerFailures', authorizerFailures, {
      description:
        'API Gateway answered 500 because the authorizer failed or timed out (AUTHORIZER_FAILURE / ' +
        'AUTHORIZER_CONFIGURATION_ERROR)',
      threshold: 1,
    });

    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# ${this.prefix}\nAPI, functions and table. Every alarm notifies the SNS topic "${this.prefix} alarms".`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'API requests and errors',
        left: [requests, clientErrors, serverErrors],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'API latency (ms)',
        left: [
          api.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
          api.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
          api.metricIntegrationLatency({ period: PERIOD, statistic: 'p99', label: 'integration p99' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Edge refusals and authorizer failures',
        left: [...this.edgeRefusals(publicApi), authorizerFailures.with({ label: 'authorizer failures' })],
        right: [serverErrorRate],
        width: 8,
      }),
    );
  }

  /** Requests WAF refused: over the per-address limit, and on the carrier's callback paths. */
  private edgeRefusals(publicApi: PublicApi): cloudwatch.IMetric[] {
    const region = Stack.of(this).region;
    const blocked = publicApi.networkRateLimit.metricBlockedRequests(region, {
      period: PERIOD,
      label: 'WAF rate-limited',
    });
    // A flood on the carrier's callback paths shows here: unsigned requests refused, and addresses cut off.
    const callbackRefusals = [
      publicApi.networkRateLimit.metricBlockedRequests(
        region,
        { period: PERIOD, label: 'callbacks without signature' },
        UNSIGNED_CALLBACK_RULE_NAME,
      ),
      publicApi.networkRateLimit.metricBlockedRequests(
        region,
        { period: PERIOD, label: 'callbacks rate-limited' },
        CALLBACK_PER_ADDRESS_RULE_NAME,
      ),
    ];
    return [blocked, ...callbackRefusals];
  }

  private watchTable(serviceTable: ServiceTable): void {
    const { table } = serviceTable;
    // The operations the service sends (a transaction is one operation to DynamoDB).
    const operations = [
      dynamodb.Operation.GET_ITEM,
      dynamodb.Operation.QUERY,
      dynamodb.Operation.PUT_ITEM,
      dynamodb.Operation.UPDATE_ITEM,
      dynamodb.Operation.DELETE_ITEM,
      dynamodb.Operation.TRANSACT_WRITE_ITEMS,
    ];
    // One math expression per graph: both would name their per-operation metrics alike.
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'DynamoDB consumed capacity (Sum)',
        left: [
          table.metricConsumedReadCapacityUnits({ period: PERIOD, label: 'read' }),
          table.metricConsumedWriteCapacityUnits({ period: PERIOD, label: 'write' }),
        ],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'DynamoDB throttled requests (Sum)',
        left: [table.metricThrottledRequestsForOperations({ operations, period: PERIOD, label: 'throttled' })],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'DynamoDB system errors (Sum)',
        left: [table.metricSystemErrorsForOperations({ operations, period: PERIOD, label: 'system errors' })],
        width: 8,
      }),
    );
  }
}
