import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import { logger, TABLE_NAME } from '../lambdas/shared/aws';
import { DEFAULT_BACKOFF_BASE_MS } from '../lambdas/contexts/webhooks/backoff';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../lambdas/contexts/webhooks/http-post';
import { toStreamChange } from '../lambdas/contexts/webhooks/stream-change';
import { claimStaleAfterMs, processDeliveryMessages } from '../lambdas/contexts/webhooks/deliver';
import { endpointCache, routeChange } from '../lambdas/contexts/webhooks/route-change';
import { LocalDelayQueue } from './delay-queue';
import { runInvocation } from './invocations';
import { localDynamoClient } from './dynamodb-local';
import type { QueueStore } from './queue-file';
import { localEngineClientConfig } from '../lambdas/shared/config';

/**
 * The webhook pipeline of the local runtime: what DynamoDB Streams -> router Lambda -> SQS ->
 * sender Lambda do in AWS, in-process. A poller reads DynamoDB Local's stream and feeds the
 * router's logic a batch at a time, as Lambda's event source mapping does; a timer queue with
 * SQS's delay rules feeds the sender's logic. Both are the very functions the Lambdas run.
 */
export type WebhookPipelineOptions = {
  /** DynamoDB Local's URL. */
  endpoint: string;
  /** Must be the table the core modules use (TABLE_NAME), checked at start. */
  tableName: string;
  /** First retry wait; later waits double up to 60 x this (`--webhook-backoff-ms`). */
  backoffBaseMs?: number;
  /** Allows http and loopback targets: a receiver on localhost. */
  allowInsecureTargets?: boolean;
  pollIntervalMs?: number;
  attemptTimeoutMs?: number;
  /**
   * Where the delivery queue keeps its messages across restarts (`<state-dir>/webhook-queue.jsonl`); none: in memory
   * only.
   */
  queueStore?: QueueStore;
};

/**
 * What the router has done since the pipeline started: batches of stream records, the records in
 * them (every change of the table, its own delivery rows included), the events they raised, and
 * the records it gave up on.
 */
export type RouterStats = { batches: number; records: number; events: number; abandoned: number };

export type WebhookPipeline = {
  stop: () => Promise<void>;
  routerStats: () => RouterStats;
  /** Delivery messages kept by the queue (waiting, visible or being sent). */
  queued: () => number;
};

const DEFAULT_POLL_INTERVAL_MS = 150;
/**
 * Records of one batch routed at once, as the router Lambda's batch processor handles a batch's
 * records concurrently: a batch of a few hundred events is a few rounds of table writes, not a
 * few hundred in a row.
 */
const ROUTE_CONCURRENCY = 16;
const SHARD_DISCOVERY_INTERVAL_MS = 2_000;
/** A thrown message comes back this long after its claim went stale, as SQS's visibility timeout does. */
const LOCAL_VISIBILITY_MARGIN_MS = 1_000;
const ROUTE_TRIES = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work` over `items`, at most `concurrency` at a time. */
async function inPool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

async function latestStreamArn(endpoint: string, tableName: string): Promise<string> {
  const client = localDynamoClient(endpoint);
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (!Table?.LatestStreamArn) throw new Error(`Table ${tableName} has no stream; create it with ensureTable()`);
    return Table.LatestStreamArn;
  } finally {
    client.destroy();
  }
}

export async function startWebhookPipeline(options: WebhookPipelineOptions): Promise<WebhookPipeline> {
  if (options.tableName !== TABLE_NAME) {
    throw new Error(
      `startWebhookPipeline: tableName ${options.tableName} differs from TABLE_NAME ${TABLE_NAME} the core modules use`,
    );
  }
  const pipeline = new StreamPipeline(options, await latestStreamArn(options.endpoint, options.tableName));
  await pipeline.start();
  return {
    routerStats: () => ({ ...pipeline.stats }),
    queued: () => pipeline.queue.size,
    stop: () => pipeline.stop(),
  };
}

/**
 * The poller and the queue with their state: the open shards' iterators, the last sequence number
 * routed per shard (to resume after an expired iterator), the shards seen, and the router's stats.
 */
class StreamPipeline {
  readonly stats: RouterStats = { batches: 0, records: 0, events: 0, abandoned: 0 };
  readonly queue: LocalDelayQueue;
  private readonly streams: DynamoDBStreamsClient;
  private readonly iterators = new Map<string, string>();
  private readonly lastSequence = new Map<string, string>();
  private readonly seenShards = new Set<string>();
  private lastDiscovery = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: WebhookPipelineOptions,
    private readonly streamArn: string,
  ) {
    this.streams = new DynamoDBStreamsClient(localEngineClientConfig(options.endpoint));
    const timeoutMs = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
    this.queue = new LocalDelayQueue(
      // Each batch received is one invocation of the sender function.
      (messages) =>
        runInvocation(() =>
          processDeliveryMessages(messages, {
            queue: this.queue,
            backoffBaseMs: options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
            timeoutMs,
            allowInsecureTargets: options.allowInsecureTargets ?? false,
          }),
        ),
      claimStaleAfterMs(timeoutMs) + LOCAL_VISIBILITY_MARGIN_MS,
      { store: options.queueStore },
    );
  }

  /** Reads the stream from now on, then resumes the deliveries that were waiting when the runtime last stopped. */
  async start(): Promise<void> {
    await this.discoverShards(true);
    this.schedule();
    // Deliveries that were waiting when the runtime last stopped carry on with their attempt and time.
    const resumed = await this.queue.resume();
    if (resumed > 0) logger.info('Local webhook queue resumed', { messages: resumed });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    // One last read: a change of the last moments is routed (and its deliveries kept) rather
    // than left behind the LATEST position the next start reads from.
    await this.pollOnce().catch((err: unknown) =>
      logger.error('Local stream poll failed', { error: (err as Error).message }),
    );
    await this.queue.stop();
    this.streams.destroy();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = this.pollOnce()
        .catch((err: unknown) => logger.error('Local stream poll failed', { error: (err as Error).message }))
        .finally(() => this.schedule());
    }, this.options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    this.timer.unref();
  }

  private async pollOnce(): Promise<void> {
    if (Date.now() - this.lastDiscovery >= SHARD_DISCOVERY_INTERVAL_MS) await this.discoverShards(false);
    for (const [shardId, iterator] of [...this.iterators]) await this.readShard(shardId, iterator);
  }

  private async iteratorFor(shardId: string, type: ShardIteratorType, sequenceNumber?: string) {
    const { ShardIterator } = await this.streams.send(
      new GetShardIteratorCommand({
        StreamArn: this.streamArn,
        ShardId: shardId,
        ShardIteratorType: type,
        SequenceNumber: sequenceNumber,
      }),
    );
    return ShardIterator;
  }

  /** At start, open shards from now on (LATEST); shards that appear later, from their beginning. */
  private async discoverShards(atStart: boolean): Promise<void> {
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await this.streams.send(
        new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId!;
        if (this.seenShards.has(shardId)) continue;
        this.seenShards.add(shardId);
        if (atStart && shard.SequenceNumberRange?.EndingSequenceNumber) continue; // closed before we started
        const iterator = await this.iteratorFor(shardId, atStart ? 'LATEST' : 'TRIM_HORIZON');
        if (iterator) this.iterators.set(shardId, iterator);
      }
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    this.lastDiscovery = Date.now();
  }

  private async readShard(shardId: string, iterator: string): Promise<void> {
    let result: GetRecordsCommandOutput;
    try {
      result = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
    } catch (err) {
      if (!(err instanceof ExpiredIteratorException)) throw err;
      const after = this.lastSequence.get(shardId);
      const fresh = await this.iteratorFor(shardId, after ? 'AFTER_SEQUENCE_NUMBER' : 'LATEST', after);
      if (fresh) this.iterators.set(shardId, fresh);
      return;
    }
    const records = result.Records ?? [];
    if (records.length > 0) {
      // One invocation of the router function per batch of stream records, retries included, as Lambda hands it a batch.
      await runInvocation(() => this.routeRecords(records));
      const last = records[records.length - 1].dynamodb?.SequenceNumber;
      if (last) this.lastSequence.set(shardId, last);
    }
    if (result.NextShardIterator) {
      this.iterators.set(shardId, result.NextShardIterator);
    } else {
      this.iterators.delete(shardId); // the shard is closed and read to its end; its children come next
      this.lastDiscovery = 0;
    }
  }

  private async routeRecords(records: StreamRecord[]): Promise<void> {
    // One endpoint lookup per organization and event type for the whole batch, made after its
    // records were read, so an endpoint added before any of them receives it.
    const endpoints = endpointCache();
    const changes = records.flatMap((record) => {
      const change = toStreamChange({
        eventID: record.eventID,
        eventName: record.eventName,
        approximateCreationMs: record.dynamodb?.ApproximateCreationDateTime?.getTime(),
        newImage: record.dynamodb?.NewImage,
        oldImage: record.dynamodb?.OldImage,
      });
      return change ? [change] : [];
    });
    this.stats.batches += 1;
    this.stats.records += changes.length;
    await inPool(changes, ROUTE_CONCURRENCY, (change) => this.routeWithRetries(change, endpoints));
  }

  private async routeWithRetries(
    change: NonNullable<ReturnType<typeof toStreamChange>>,
    endpoints: ReturnType<typeof endpointCache>,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { eventId } = await routeChange(change, { queue: this.queue, endpoints });
        if (eventId) this.stats.events += 1;
        return;
      } catch (err) {
        if (attempt >= ROUTE_TRIES) {
          this.stats.abandoned += 1;
          logger.error('Local webhook router gave up on a stream record', {
            eventID: change.eventId,
            error: (err as Error).message,
          });
          return;
        }
        await sleep(100 * attempt);
      }
    }
  }
}
