import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { tableConfig } from './config';

/**
 * The process-wide SDK clients and logger, created once at module scope so every invocation of a
 * warm Lambda (and every request of the local runtime) reuses the same connections.
 */
const { tableName, endpoint } = tableConfig();

export const TABLE_NAME = tableName;

export const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient(
    endpoint
      ? // DynamoDB Local accepts any credentials; fixed ones keep the local runtime independent of ~/.aws.
        { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {},
  ),
  { marshallOptions: { removeUndefinedValues: true } },
);

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'cct-service' });
