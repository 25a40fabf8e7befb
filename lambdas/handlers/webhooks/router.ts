import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { SQSClient } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { sqsDeliveryQueue } from '../../contexts/webhooks/queue';
import { endpointCache, routeChange, type EndpointCache } from '../../contexts/webhooks/route-change';
import { logger } from '../../shared/aws';
import { requireEnv } from '../../shared/config';
import { fromLambdaRecord } from './stream-records';

/**
 * Router: DynamoDB Streams (filtered to the rows that matter, see ROUTER_FILTER_PATTERNS) ->
 * deliveries -> SQS. Partial batch failures: a failed record is reported by sequence number and
 * Lambda retries from there; records routed before it are routed again, which is harmless.
 */
const queue = sqsDeliveryQueue(new SQSClient({}), requireEnv('WEBHOOK_QUEUE_URL'));
const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function route(record: DynamoDBRecord, endpoints: EndpointCache): Promise<void> {
  const change = fromLambdaRecord(record);
  if (!change) {
    logger.warn('Stream record without id, name or time skipped', { eventID: record.eventID });
    return;
  }
  await routeChange(change, { queue, endpoints });
}

async function routeBatch(event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> {
  const endpoints = endpointCache(); // per invocation: a new endpoint is seen by the next batch
  return processPartialResponse(event, (record: DynamoDBRecord) => route(record, endpoints), processor, { context });
}

export const handler = middy(routeBatch).use(injectLambdaContext(logger, { resetKeys: true }));
