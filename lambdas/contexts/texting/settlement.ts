import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, metrics, MetricUnit, TABLE_NAME } from '../../shared/aws';
import { GSIS } from '../../shared/table/table-schema';
import { retryWhileBusy } from '../../shared/table/contention';
import { updateMessageStatus } from './delivery-status';
import { UNSETTLED_SHARDS, unsettledPk } from './messages';
import { SETTLEMENT_FAILED_METRIC, SETTLEMENT_GRACE_MS } from './settlement-grace';

/**
 * The settlement sweep: an outbound text whose carrier outcome is still unknown after the grace
 * period (no sid from the send's answer, no status callback) is failed and refunded. Runs on a
 * schedule (EventBridge on AWS, a timer in the local runtime). It reads only the unsettled
 * worklist (gsi2 `UNSETTLED#<shard>`, oldest first, up to the cutoff), never the messages.
 *
 * The grace period (./settlement-grace.ts) is longer than Twilio keeps retrying a status callback,
 * so a text the carrier did take has been settled by its callback long before; the guard
 * `onlyIfUnsettled` makes a callback and the sweep racing each other harmless (the first wins, once).
 *
 * An outage leaves hundreds of thousands of texts at once, so a run reads the shards in parallel and
 * settles each text in its own step, several at a time, until its time budget is spent (docs/capacity.md
 * sizes it). A text that cannot be settled is logged, counted (`TextsSettlementFailed`, alarmed) and
 * skipped: it never holds back the texts after it, and the next run tries it again.
 */
export type SweepOptions = {
  now?: Date;
  graceMs?: number;
  /** Texts examined per run at most; the next run continues. */
  maxTexts?: number;
  /** No text is started after this long; those under way finish (the function's timeout leaves room). */
  budgetMs?: number;
  /** Shards read at once, and texts of each shard settled at once. */
  shardReaders?: number;
  textsPerShard?: number;
};

export type SweepResult = { examined: number; failed: number; skipped: number };

/** The defaults a scheduled run uses: 16 x 4 = 64 settlements in flight (docs/capacity.md). */
export const SWEEP_DEFAULTS = {
  maxTexts: 200_000,
  budgetMs: 45_000,
  shardReaders: 16,
  textsPerShard: 4,
} as const;

type Run = {
  cutoff: string;
  deadline: number;
  maxTexts: number;
  textsPerShard: number;
  result: SweepResult;
};

export async function settleUnknownOutcomes(options: SweepOptions = {}): Promise<SweepResult> {
  const startedAt = Date.now();
  const run: Run = {
    cutoff: new Date((options.now ?? new Date()).getTime() - (options.graceMs ?? SETTLEMENT_GRACE_MS)).toISOString(),
    deadline: startedAt + (options.budgetMs ?? SWEEP_DEFAULTS.budgetMs),
    maxTexts: options.maxTexts ?? SWEEP_DEFAULTS.maxTexts,
    textsPerShard: Math.max(1, options.textsPerShard ?? SWEEP_DEFAULTS.textsPerShard),
    result: { examined: 0, failed: 0, skipped: 0 },
  };
  const shards = Array.from({ length: UNSETTLED_SHARDS }, (_, shard) => shard);
  await inParallel(shards, options.shardReaders ?? SWEEP_DEFAULTS.shardReaders, (shard) => sweepShard(run, shard));
  // Stryker disable next-line ArithmeticOperator: tookMs is only logged
  report(run, Date.now() - startedAt);
  return run.result;
}

const hasRoom = (run: Run) => run.result.examined < run.maxTexts && Date.now() < run.deadline;

/** One shard, oldest first, a page at a time; the texts of a page settled a few at a time. */
async function sweepShard(run: Run, shard: number): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    if (!hasRoom(run)) return;
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        IndexName: GSIS.gsi2.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk < :cutoff',
        ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, '#sk': GSIS.gsi2.sortKey },
        ExpressionAttributeValues: { ':pk': unsettledPk(shard), ':cutoff': run.cutoff },
        Limit: 100,
        ExclusiveStartKey: startKey,
      }),
    );
    await inParallel(page.Items ?? [], run.textsPerShard, (item) => (hasRoom(run) ? settleOne(run, item) : undefined));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Tries at one text while the table is busy, before it is skipped until the next run. */
const SETTLE_ATTEMPTS = 5;

/** One text, in its own step: whatever it throws is this text's alone. */
async function settleOne(run: Run, item: Record<string, unknown>): Promise<void> {
  run.result.examined += 1;
  const tenantId = item.tenantId as string;
  const messageId = item.id as string;
  try {
    // Texts settled side by side refund onto the same spend shards: a conflict is a reason to try again, not to skip.
    const { changed } = await retryWhileBusy(SETTLE_ATTEMPTS, () =>
      updateMessageStatus(tenantId, { messageId }, 'failed', {
        failureReason: 'carrier_outcome_unknown',
        onlyIfUnsettled: true,
      }),
    );
    if (changed) run.result.failed += 1;
  } catch (err) {
    run.result.skipped += 1;
    // Ids and the error's name and message only: never the text's body.
    const { name, message } = err as Error;
    // Stryker disable next-line StringLiteral: the log's wording; its fields are tested
    logger.error('Could not settle a text whose carrier outcome is unknown; skipped until the next run', {
      tenantId,
      messageId,
      error: { name, message },
    });
  }
}

function report(run: Run, tookMs: number): void {
  const { result, cutoff } = run;
  if (result.failed > 0) {
    // Stryker disable next-line StringLiteral,ObjectLiteral: a log line only; the result and the metric carry the counts
    logger.warn('Failed and refunded texts whose carrier outcome stayed unknown', { ...result, cutoff, tookMs });
    metrics.addMetric('TextsSettledAsFailed', MetricUnit.Count, result.failed);
  }
  if (result.skipped > 0) metrics.addMetric(SETTLEMENT_FAILED_METRIC, MetricUnit.Count, result.skipped);
}

/** `work` over `items`, at most `limit` at a time. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void> | undefined): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
