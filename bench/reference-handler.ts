import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

/**
 * The benchmark's reference Lambda: the floor any handler of this design pays. It builds the
 * document client at init, as lambdas/shared/aws.ts does, and reads one item per invocation. Every
 * function's bundle size and cold init are compared with this one, built with the same options.
 */
const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});

export const handler = async (event: { pk: string; sk: string }) =>
  (await dynamo.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: { pk: event.pk, sk: event.sk } })))
    .Item ?? null;
