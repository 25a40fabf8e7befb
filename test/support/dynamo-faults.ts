import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * DynamoDB faults injected at the client, outside the SDK's own retries, so the service's code
 * meets them as it would after the SDK gave up:
 * - `throttled`: refused before it reached the table (ThrottlingException; nothing written)
 * - `conflict`:  a transaction cancelled for a concurrent one (TransactionConflict; nothing written)
 * - `lostAnswer`: the write reached the table and was applied, then the answer was lost (a
 *   timeout): the caller cannot know it happened, the nastiest case for money and duplicates
 */
export type DynamoFaultRates = { throttled: number; conflict: number; lostAnswer: number };
export type DynamoFaultCounts = Record<keyof DynamoFaultRates, number>;

const WRITES = new Set([
  'TransactWriteItemsCommand',
  'TransactWriteCommand',
  'UpdateItemCommand',
  'UpdateCommand',
  'PutItemCommand',
  'PutCommand',
]);

export function injectDynamoFaults(client: DynamoDBDocumentClient, random: () => number, rates: DynamoFaultRates) {
  const counts: DynamoFaultCounts = { throttled: 0, conflict: 0, lostAnswer: 0 };
  let enabled = true;
  const name = 'injectDynamoFaults';
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      if (!enabled) return next(args);
      const roll = random();
      if (roll < rates.throttled) {
        counts.throttled += 1;
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput (injected)'), {
          name: 'ThrottlingException',
          $metadata: {},
        });
      }
      if (command.startsWith('TransactWrite') && roll < rates.throttled + rates.conflict) {
        counts.conflict += 1;
        const items = ((args.input as { TransactItems?: unknown[] }).TransactItems ?? []).map(() => ({
          Code: 'TransactionConflict',
        }));
        throw new TransactionCanceledException({
          message: 'Transaction cancelled (injected conflict)',
          $metadata: {},
          CancellationReasons: items,
        });
      }
      const result = await next(args);
      if (WRITES.has(command) && random() < rates.lostAnswer) {
        counts.lostAnswer += 1;
        throw Object.assign(new Error('Socket timed out without an answer (injected, after the write applied)'), {
          name: 'TimeoutError',
          $metadata: {},
        });
      }
      return result;
    },
    { step: 'initialize', name },
  );
  return {
    counts,
    disable: () => {
      enabled = false;
    },
    remove: () => client.middlewareStack.remove(name),
  };
}
