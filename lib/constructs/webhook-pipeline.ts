import { Duration, Validations } from 'aws-cdk-lib';
import { FilterCriteria, type Function as LambdaFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FunctionFactory } from './function-factory';
import type { ServiceTable, TableAccess } from './table';

export type WebhookPipelineProps = {
  table: ServiceTable;
  functions: FunctionFactory;
  /** Handler modules relative to the project root (`lambdas/handlers/webhooks/router.ts`, `.../sender.ts`). */
  routerEntry: string;
  senderEntry: string;
  /**
   * Event-source filter patterns, so only row changes that can raise an event invoke the router
   * (`ROUTER_FILTER_PATTERNS` of lambdas/contexts/webhooks/filter-criteria.ts).
   */
  routerFilterPatterns: readonly Record<string, unknown>[];
  routerTableAccess: TableAccess;
  senderTableAccess: TableAccess;
};

/**
 * Router Lambda timeout. It handles a batch of stream records, each a Query, a few writes and an
 * SQS send; a minute covers a full batch with SDK retries.
 */
const ROUTER_TIMEOUT = Duration.seconds(60);
/**
 * Sender Lambda timeout: a batch of up to 10 deliveries attempted concurrently, each capped at
 * 10 s by the spec (plus DNS and the row updates), so 30 s.
 */
const SENDER_TIMEOUT = Duration.seconds(30);
const SENDER_BATCH_SIZE = 10;

/**
 * Sized for events per stream shard and per region (docs/capacity.md, "Events per second"): both
 * functions are CPU-bound between their table calls (about 3 ms of CPU per event routed and per
 * delivery attempted, bench section 10b), and Lambda gives CPU in proportion to memory (1,769 MB is
 * one vCPU). At 1,024 MB an event costs the same GB-seconds as at 256 MB and is routed four times
 * sooner: about 190 events a second per batch in flight, where 256 MB held a shard near 50.
 */
export const ROUTER_MEMORY_MB = 1024;
/** Batches of one stream shard the router handles at once (Lambda keeps each item's records in order). */
export const ROUTER_PARALLELIZATION_FACTOR = 2;
export const ROUTER_BATCH_SIZE = 100;
export const SENDER_MEMORY_MB = 1024;
/**
 * Sender invocations at once, each with a batch of 10 attempts in flight: 500 attempts at once for
 * the region, about 4,000 deliveries a second to receivers answering in 100 ms, 500 a second to
 * receivers taking a second. A ceiling, so a backlog cannot take the account's Lambda concurrency
 * the API needs (1,000 by default, 200 of it reserved: capacity.md).
 */
export const SENDER_MAX_CONCURRENCY = 50;
/**
 * A message the sender fails to *process* (a table error, a malformed message; not a receiver's
 * failure, which the sender re-queues itself with a delay) is retried this many times, then moved
 * to the dead-letter queue for the operator.
 */
const MAX_RECEIVES = 5;

/**
 * Table stream -> router -> delivery queue -> sender -> HTTPS, with a dead-letter queue for
 * what cannot be processed. Retries with backoff are the sender's own re-enqueues with
 * DelaySeconds; SQS redrive only catches processing failures.
 */
export class WebhookPipeline extends Construct {
  readonly router: LambdaFunction;
  readonly sender: LambdaFunction;
  readonly queue: sqs.Queue;
  /** Delivery messages the sender could not process after MAX_RECEIVES attempts. */
  readonly deadLetterQueue: sqs.Queue;
  /** Pointers (shard, sequence numbers) to stream batches the router gave up on. */
  readonly routerFailures: sqs.Queue;

  constructor(scope: Construct, id: string, props: WebhookPipelineProps) {
    super(scope, id);
    const queues = this.createQueues();
    this.deadLetterQueue = queues.deadLetterQueue;
    this.routerFailures = queues.routerFailures;
    this.queue = queues.queue;
    const environment = { WEBHOOK_QUEUE_URL: this.queue.queueUrl };
    this.router = this.createRouter(props, environment);
    this.sender = this.createSender(props, environment);
  }

  /** The delivery queue and the two queues at the end of the line, kept 14 days. */
  private createQueues(): { deadLetterQueue: sqs.Queue; routerFailures: sqs.Queue; queue: sqs.Queue } {
    const queueDefaults = {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows: time for an operator to look before anything is lost.
      retentionPeriod: Duration.days(14),
    };
    const deadLetterQueue = new sqs.Queue(this, 'DeadLetters', queueDefaults);
    const routerFailures = new sqs.Queue(this, 'RouterFailures', queueDefaults);
    const queue = new sqs.Queue(this, 'Deliveries', {
      ...queueDefaults,
      // AWS's guidance for an SQS event source: at least six times the function timeout, so a
      // message is not redelivered while a throttled invocation still holds it.
      visibilityTimeout: Duration.seconds(SENDER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: MAX_RECEIVES },
    });
    for (const terminal of [deadLetterQueue, routerFailures]) {
      Validations.of(terminal).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself the end of the line (a dead-letter queue): an operator inspects and redrives it.',
      });
    }
    return { deadLetterQueue, routerFailures, queue };
  }

  /** The router: reads the table stream, writes deliveries, enqueues them. */
  private createRouter(props: WebhookPipelineProps, environment: Record<string, string>): LambdaFunction {
    const router = props.functions.create('WebhookRouter', {
      entry: props.routerEntry,
      description: 'Webhook router: table stream -> deliveries -> queue',
      timeout: ROUTER_TIMEOUT,
      memorySize: ROUTER_MEMORY_MB,
      environment,
    });
    props.table.grant(router, props.routerTableAccess);
    this.queue.grantSendMessages(router);
    router.addEventSource(
      new DynamoEventSource(props.table.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: ROUTER_BATCH_SIZE,
        parallelizationFactor: ROUTER_PARALLELIZATION_FACTOR,
        // Events may arrive up to a minute late (spec section 6); a short window batches writes.
        maxBatchingWindow: Duration.seconds(1),
        filters: props.routerFilterPatterns.map((pattern) => FilterCriteria.filter(pattern)),
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: 10,
        onFailure: new SqsDlq(this.routerFailures),
      }),
    );
    // Granted by the event source: dynamodb:ListStreams has no resource-level permissions.
    Validations.of(router.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray trace upload and dynamodb:ListStreams (added by the DynamoDB event source) support no resource-level ' +
        'permissions; the stream actions themselves are scoped to the table stream ARN.',
    });
    return router;
  }

  /** The sender: takes deliveries off the queue, POSTs them, re-enqueues the next attempt. */
  private createSender(props: WebhookPipelineProps, environment: Record<string, string>): LambdaFunction {
    const sender = props.functions.create('WebhookSender', {
      entry: props.senderEntry,
      description: 'Webhook sender: queue -> signed HTTPS POST',
      timeout: SENDER_TIMEOUT,
      memorySize: SENDER_MEMORY_MB,
      environment,
    });
    props.table.grant(sender, props.senderTableAccess);
    // Re-enqueues the next attempt with DelaySeconds.
    this.queue.grantSendMessages(sender);
    sender.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: SENDER_BATCH_SIZE,
        reportBatchItemFailures: true,
        maxConcurrency: SENDER_MAX_CONCURRENCY,
      }),
    );
    return sender;
  }
}
