import { dynamo } from '../../lambdas/shared/aws';

/** What the reads since the last reset cost, as DynamoDB reports it. */
export type ReadMeterSnapshot = { calls: number; itemsExamined: number; readUnits: number };

export type ReadMeter = { reset(): void; snapshot(): ReadMeterSnapshot; stop(): void };

const READ_COMMANDS = new Set(['GetCommand', 'BatchGetCommand', 'QueryCommand', 'ScanCommand', 'TransactGetCommand']);
const MIDDLEWARE_NAME = 'readMeter';

type Capacity = { CapacityUnits?: number };
type ReadOutput = {
  ScannedCount?: number;
  Item?: unknown;
  Responses?: Record<string, unknown[]> | unknown[];
  ConsumedCapacity?: Capacity | Capacity[];
};

/** Items DynamoDB looked at: ScannedCount of a Query or Scan (before any filter), the rows a Get returned. */
function itemsExamined(output: ReadOutput): number {
  if (output.ScannedCount !== undefined) return output.ScannedCount;
  if (output.Item !== undefined) return 1;
  if (Array.isArray(output.Responses)) return output.Responses.length;
  return Object.values(output.Responses ?? {}).reduce((sum, rows) => sum + rows.length, 0);
}

const unitsOf = (capacity: ReadOutput['ConsumedCapacity']): number =>
  [capacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);

/**
 * Counts the reads the service's shared document client sends (test code only): a middleware asks
 * every read for `ReturnConsumedCapacity: TOTAL` and sums calls, items examined and read units.
 * DynamoDB Local reports capacity as DynamoDB does (4 KB per strongly consistent unit, half for
 * eventually consistent reads). `stop()` removes the middleware.
 */
export function meterDynamoReads(): ReadMeter {
  let totals: ReadMeterSnapshot = { calls: 0, itemsExamined: 0, readUnits: 0 };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (!READ_COMMANDS.has(context.commandName ?? '')) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const output = result.output as ReadOutput;
      totals = {
        calls: totals.calls + 1,
        itemsExamined: totals.itemsExamined + itemsExamined(output),
        readUnits: totals.readUnits + unitsOf(output.ConsumedCapacity),
      };
      return result;
    },
    { step: 'initialize', name: MIDDLEWARE_NAME, override: true },
  );
  return {
    reset: () => {
      totals = { calls: 0, itemsExamined: 0, readUnits: 0 };
    },
    snapshot: () => ({ ...totals }),
    stop: () => {
      dynamo.middlewareStack.remove(MIDDLEWARE_NAME);
    },
  };
}
