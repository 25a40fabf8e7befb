import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, metrics, MetricUnit, TABLE_NAME } from '../../shared/aws';
import { GSIS } from '../../shared/table/table-schema';
import { updateMessageStatus } from './delivery-status';
import { UNSETTLED_SHARDS, unsettledPk } from './messages';
import { SETTLEMENT_GRACE_MS } from './settlement-grace';

/**
 * The settlement sweep: an outbound text whose carrier outcome is still unknown after the grace
 * period (no sid from the send's answer, no status callback) is failed and refunded. Runs on a
 * schedule (EventBridge on AWS, a timer in the local runtime). It reads only the unsettled
 * worklist (gsi2 `UNSETTLED#<shard>`, oldest first, up to the cutoff), never the messages.
 *
 * The grace period (./settlement-grace.ts) is longer than Twilio keeps retrying a status callback,
 * so a text the carrier did take has been settled by its callback long before; the guard
 * `onlyIfUnsettled` makes a callback and the sweep racing each other harmless (the first wins, once).
 */
export type SweepOptions = {
  now?: Date;
  graceMs?: number;
  /** Texts settled per run at most; the next run continues (each is one transaction). */
  maxTexts?: number;
};

export type SweepResult = { examined: number; failed: number };

export async function settleUnknownOutcomes(options: SweepOptions = {}): Promise<SweepResult> {
  const cutoff = new Date(
    (options.now ?? new Date()).getTime() - (options.graceMs ?? SETTLEMENT_GRACE_MS),
  ).toISOString();
  const maxTexts = options.maxTexts ?? 500;
  const result: SweepResult = { examined: 0, failed: 0 };
  for (let shard = 0; shard < UNSETTLED_SHARDS && result.examined < maxTexts; shard += 1) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: TABLE_NAME,
          IndexName: GSIS.gsi2.indexName,
          KeyConditionExpression: '#pk = :pk AND #sk < :cutoff',
          ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, '#sk': GSIS.gsi2.sortKey },
          ExpressionAttributeValues: { ':pk': unsettledPk(shard), ':cutoff': cutoff },
          Limit: Math.min(100, maxTexts - result.examined),
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        result.examined += 1;
        const { changed } = await updateMessageStatus(
          item.tenantId as string,
          { messageId: item.id as string },
          'failed',
          {
            failureReason: 'carrier_outcome_unknown',
            onlyIfUnsettled: true,
          },
        );
        if (changed) result.failed += 1;
      }
      startKey = result.examined < maxTexts ? page.LastEvaluatedKey : undefined;
    } while (startKey);
  }
  if (result.failed > 0) {
    logger.warn('Failed and refunded texts whose carrier outcome stayed unknown', { ...result, cutoff });
    metrics.addMetric('TextsSettledAsFailed', MetricUnit.Count, result.failed);
  }
  return result;
}
