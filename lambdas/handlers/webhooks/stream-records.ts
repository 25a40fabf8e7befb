import type { DynamoDBRecord } from 'aws-lambda';
import { toStreamChange, type StreamChange } from '../../contexts/webhooks/stream-change';

/** A Lambda DynamoDB Streams record as a stream change (Lambda gives the time in seconds). */
export const fromLambdaRecord = (record: DynamoDBRecord): StreamChange | undefined =>
  toStreamChange({
    eventID: record.eventID,
    eventName: record.eventName,
    approximateCreationMs:
      record.dynamodb?.ApproximateCreationDateTime === undefined
        ? undefined
        : record.dynamodb.ApproximateCreationDateTime * 1000,
    newImage: record.dynamodb?.NewImage,
    oldImage: record.dynamodb?.OldImage,
  });
