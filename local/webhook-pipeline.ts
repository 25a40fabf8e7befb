import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
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
  const streamArn = await latestStreamArn(options.endpoint, options.tableName);
  const streams = new DynamoDBStreamsClient(localEngineClientConfig(options.endpoint));
  const timeoutMs = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const queue: LocalDelayQueue = new LocalDelayQueue(
    // Each batch received is one invocation of the sender function.
    (messages) =>
      runInvocation(() =>
        processDeliveryMessages(messages, {
          queue,
          backoffBaseMs: options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
          timeoutMs,
          allowInsecureTargets: options.allowInsecureTargets ?? false,
        }),
      ),
    claimStaleAfterMs(timeoutMs) + LOCAL_VISIBILITY_MARGIN_MS,
    { store: options.queueStore },
  );

  const iterators = new Map<string, string>();
  const lastSequence = new Map<string, string>();
  const seenShards = new Set<string>();
  let lastDiscovery = 0;

  const iteratorFor = async (shardId: string, type: ShardIteratorType, sequenceNumber?: string) =>
    (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: type,
          SequenceNumber: sequenceNumber,
        }),
      )
    ).ShardIterator;

  /** At start, open shards from now on (LATEST); shards that appear later, from their beginning. */
  async function discoverShards(atStart: boolean): Promise<void> {
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId!;
        if (seenShards.has(shardId)) continue;
        seenShards.add(shardId);
        if (atStart && shard.SequenceNumberRange?.EndingSequenceNumber) continue; // closed before we started
        const iterator = await iteratorFor(shardId, atStart ? 'LATEST' : 'TRIM_HORIZON');
        if (iterator) iterators.set(shardId, iterator);
      }
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    lastDiscovery = Date.now();
  }

  const stats: RouterStats = { batches: 0, records: 0, events: 0, abandoned: 0 };

  /**
   * One invocation of the router function per batch of stream records, retries included, as Lambda hands it a batch.
   */
  const routeBatch = (records: StreamRecord[]): Promise<void> => runInvocation(() => routeRecords(records));

  async function routeRecords(records: StreamRecord[]): Promise<void> {
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
    stats.batches += 1;
    stats.records += changes.length;
    await inPool(changes, ROUTE_CONCURRENCY, async (change) => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const { eventId } = await routeChange(change, { queue, endpoints });
          if (eventId) stats.events += 1;
          return;
        } catch (err) {
          if (attempt >= ROUTE_TRIES) {
            stats.abandoned += 1;
            logger.error('Local webhook router gave up on a stream record', {
              eventID: change.eventId,
              error: (err as Error).message,
            });
            return;
          }
          await sleep(100 * attempt);
        }
      }
    });
  }

  const getRecords = (iterator: string) =>
    streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));

  async function readShard(shardId: string, iterator: string): Promise<void> {
    let result: Awaited<ReturnType<typeof getRecords>>;
    try {
      result = await getRecords(iterator);
    } catch (err) {
      if (!(err instanceof ExpiredIteratorException)) throw err;
      const after = lastSequence.get(shardId);
      const fresh = await iteratorFor(shardId, after ? 'AFTER_SEQUENCE_NUMBER' : 'LATEST', after);
      if (fresh) iterators.set(shardId, fresh);
      return;
    }
    const records = result.Records ?? [];
    if (records.length > 0) {
      await routeBatch(records);
      const last = records[records.length - 1].dynamodb?.SequenceNumber;
      if (last) lastSequence.set(shardId, last);
    }
    if (result.NextShardIterator) {
      iterators.set(shardId, result.NextShardIterator);
    } else {
      iterators.delete(shardId); // the shard is closed and read to its end; its children come next
      lastDiscovery = 0;
    }
  }

  async function pollOnce(): Promise<void> {
    if (Date.now() - lastDiscovery >= SHARD_DISCOVERY_INTERVAL_MS) await discoverShards(false);
    for (const [shardId, iterator] of [...iterators]) await readShard(shardId, iterator);
  }

  await discoverShards(true);

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      polling = pollOnce()
        .catch((err: unknown) => logger.error('Local stream poll failed', { error: (err as Error).message }))
        .finally(schedule);
    }, options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    timer.unref();
  };
  schedule();
  // Deliveries that were waiting when the runtime last stopped carry on with their attempt and time.
  const resumed = await queue.resume();
  if (resumed > 0) logger.info('Local webhook queue resumed', { messages: resumed });

  return {
    routerStats: () => ({ ...stats }),
    queued: () => queue.size,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await polling;
      // One last read: a change of the last moments is routed (and its deliveries kept) rather
      // than left behind the LATEST position the next start reads from.
      await pollOnce().catch((err: unknown) =>
        logger.error('Local stream poll failed', { error: (err as Error).message }),
      );
      await queue.stop();
      streams.destroy();
    },
  };
}
