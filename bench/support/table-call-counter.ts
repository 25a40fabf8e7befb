import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Counts DynamoDB table calls through two middlewares on a client's middleware stack:
 * - `initialize`: one count per command, with `ReturnConsumedCapacity: TOTAL` added to the input
 *   so the consumed capacity can be summed from the output;
 * - `finalizeRequest` (low priority, so inside the SDK's retry loop): one count per HTTP round trip.
 * Used in the local runtime (preloaded by runtime-preload.ts) and on the benchmark's own client
 * for the bare operations, so both sides pay the same for being counted.
 */
export type CallTally = {
  /** Commands by operation name (GetItem, Query, TransactWriteItems, ...). */
  commands: Record<string, number>;
  /** HTTP round trips (retries included). */
  roundTrips: number;
  /** Capacity units as DynamoDB Local reports them, by operation. */
  capacity: Record<string, number>;
  /** Failed commands by operation and error name (a cancelled transaction is still a round trip). */
  errors: Record<string, number>;
};

export type CounterStats = CallTally & {
  cpuMicros: { user: number; system: number };
  rssBytes: number;
  heapUsedBytes: number;
  /** Peak resident set size of the process since it started (getrusage). */
  maxRssBytes: number;
  /** Optimistic rounds and conditional writes lost, by site (lambdas/shared/table/rounds-lost.ts). */
  roundsLost: Record<string, number>;
};

type CapacityEntry = { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };

const operationOf = (commandName: string | undefined) => (commandName ?? 'Unknown').replace(/Command$/, '');

function unitsOf(consumed: unknown): number {
  const entries = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as CapacityEntry[];
  return entries.reduce(
    (sum, entry) => sum + (entry.CapacityUnits ?? (entry.ReadCapacityUnits ?? 0) + (entry.WriteCapacityUnits ?? 0)),
    0,
  );
}

const emptyTally = (): CallTally => ({ commands: {}, roundTrips: 0, capacity: {}, errors: {} });

export const CAPACITY_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);

export function attachTableCallCounter(stack: DynamoDBDocumentClient['middlewareStack']) {
  let tally = emptyTally();
  stack.add(
    (next, context) => async (args) => {
      const operation = operationOf(context.commandName);
      tally.commands[operation] = (tally.commands[operation] ?? 0) + 1;
      const input = args.input as Record<string, unknown>;
      if (CAPACITY_OPERATIONS.has(operation)) input.ReturnConsumedCapacity ??= 'TOTAL';
      try {
        const result = await next(args);
        const units = unitsOf((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        tally.capacity[operation] = (tally.capacity[operation] ?? 0) + units;
        return result;
      } catch (err) {
        const key = `${operation}:${(err as Error).name}`;
        tally.errors[key] = (tally.errors[key] ?? 0) + 1;
        throw err;
      }
    },
    { step: 'initialize', name: 'benchTableCallCounter' },
  );
  stack.add(
    (next) => async (args) => {
      tally.roundTrips += 1;
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'benchRoundTripCounter' },
  );
  return {
    tally: (): CallTally => tally,
    reset: (): CallTally => {
      const previous = tally;
      tally = emptyTally();
      return previous;
    },
  };
}
