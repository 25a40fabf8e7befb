import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Throttles chosen writes of the shared DynamoDB client, inside the SDK's retry loop (so its retry
 * strategy meets them as it meets DynamoDB's): a write is a TransactWriteItems, PutItem,
 * UpdateItem or DeleteItem call, numbered in the order the code under test makes them (retries
 * of one call keep its number). A throttled attempt never reaches the table: a plain write gets
 * `ThrottlingException`; a transaction is cancelled with `ThrottlingError` on its first item, as
 * DynamoDB cancels a transaction one of whose items is over its partition's budget.
 */
const WRITES = new Set(['TransactWriteItemsCommand', 'PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

export type ThrottlePlan = {
  /** The write numbers (0-based) to throttle. */
  writes: number[];
  /** Attempts of each to throttle before letting one through; Infinity throttles it for good. */
  attempts: number;
};

export function throttleWrites(client: DynamoDBDocumentClient) {
  let plan: ThrottlePlan = { writes: [], attempts: 0 };
  let written = 0;
  const throttled = new Map<number, number>();
  const key = Symbol('write number');
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (WRITES.has(context.commandName ?? '')) (context as Record<symbol, number>)[key] = written++;
      return next(args);
    },
    { step: 'initialize', name: 'numberWrites' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const write = (context as Record<symbol, number | undefined>)[key];
      if (write === undefined || !plan.writes.includes(write)) return next(args);
      const count = throttled.get(write) ?? 0;
      if (count >= plan.attempts) return next(args);
      throttled.set(write, count + 1);
      const isTransaction = context.commandName === 'TransactWriteItemsCommand';
      const items = ((args.input as { TransactItems?: unknown[] }).TransactItems ?? []).map((_, i) => ({
        Code: i === 0 ? 'ThrottlingError' : 'None',
      }));
      throw Object.assign(
        new Error(
          isTransaction
            ? 'Transaction cancelled (throttled, injected)'
            : 'Throughput exceeds the current capacity (injected)',
        ),
        {
          name: isTransaction ? 'TransactionCanceledException' : 'ThrottlingException',
          ...(isTransaction && { CancellationReasons: items }),
          $metadata: { httpStatusCode: 400 },
          $fault: 'client',
        },
      );
    },
    { step: 'finalizeRequest', priority: 'low', name: 'throttleWrites' },
  );
  return {
    /** Starts numbering writes from 0 under a new plan. */
    arm(next: ThrottlePlan) {
      plan = next;
      written = 0;
      throttled.clear();
    },
    /** Lets every write through from now on, keeping the counts. */
    disarm() {
      plan = { writes: [], attempts: 0 };
    },
    /** How many attempts of each write were throttled. */
    throttledAttempts: () => new Map(throttled),
    remove() {
      client.middlewareStack.remove('numberWrites');
      client.middlewareStack.remove('throttleWrites');
    },
  };
}
