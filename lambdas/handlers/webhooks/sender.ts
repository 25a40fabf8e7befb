import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DEFAULT_BACKOFF_BASE_MS } from '../../contexts/webhooks/backoff';
import { attemptStatesFor, processDeliveryMessage, type SenderDeps } from '../../contexts/webhooks/deliver';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../../contexts/webhooks/http-post';
import { DeliveryMessageSchema, sqsDeliveryQueue, type DeliveryMessage } from '../../contexts/webhooks/queue';
import { logger, metrics, MetricUnit } from '../../shared/aws';
import { intEnv, requireEnv } from '../../shared/config';

/**
 * Sender: SQS -> one signed HTTPS attempt per message, the batch's attempt state read in one
 * BatchGetItem first. Partial batch failures: only a message whose processing threw (a table
 * error, a malformed message) is returned to the queue; an attempt the receiver failed is not an
 * error here, it is a retry the sender queued itself. Never allows insecure targets: that option
 * exists for the local runtime only.
 */
const deps: SenderDeps = {
  queue: sqsDeliveryQueue(new SQSClient({}), requireEnv('WEBHOOK_QUEUE_URL')),
  backoffBaseMs: intEnv('WEBHOOK_BACKOFF_BASE_MS', DEFAULT_BACKOFF_BASE_MS),
  timeoutMs: intEnv('WEBHOOK_ATTEMPT_TIMEOUT_MS', DEFAULT_ATTEMPT_TIMEOUT_MS),
  allowInsecureTargets: false,
};
const processor = new BatchProcessor(EventType.SQS);

/** Outcomes worth alarming on or graphing: a delivery that ended, and attempts that failed. */
const OUTCOME_METRICS: Partial<Record<Awaited<ReturnType<typeof processDeliveryMessage>>, string>> = {
  succeeded: 'WebhookDeliveriesSucceeded',
  failed: 'WebhookDeliveriesFailed',
  retrying: 'WebhookAttemptsFailed',
};

/** The record's message, or undefined for a malformed one (its own processing then fails, alone). */
function messageOf(record: SQSRecord): DeliveryMessage | undefined {
  try {
    return DeliveryMessageSchema.parse(JSON.parse(record.body));
  } catch {
    return undefined;
  }
}

async function sendBatch(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const messages = new Map(
    event.Records.flatMap((record) => {
      const message = messageOf(record);
      return message ? [[record.messageId, message] as const] : [];
    }),
  );
  const states = await attemptStatesFor([...messages.values()]);
  const send = async (record: SQSRecord): Promise<void> => {
    const message = messages.get(record.messageId) ?? DeliveryMessageSchema.parse(JSON.parse(record.body));
    const outcome = OUTCOME_METRICS[await processDeliveryMessage(message, deps, states.get(message))];
    if (outcome) metrics.addMetric(outcome, MetricUnit.Count, 1);
  };
  return processPartialResponse(event, send, processor, { context });
}

export const handler = middy(sendBatch)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
