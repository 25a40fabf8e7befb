import { dynamo } from '../../lambdas/shared/aws';

/**
 * What DynamoDB did for the requests since the last reset, counted at the shared document client
 * (lambdas/shared/aws.ts), so it sees every call the domain code makes:
 * - `calls`: commands sent (a retried command counts once);
 * - `itemsExamined`: items a Query or Scan read before any filter (`ScannedCount`), an item a
 *   GetItem found, the items of a batch or transactional read; what DynamoDB bills a read for;
 * - `readUnits`: read capacity the engine reports (`ReturnConsumedCapacity: TOTAL` is added to
 *   every read that does not ask for it).
 */
export type ReadMeterSnapshot = { calls: number; itemsExamined: number; readUnits: number };

export type ReadMeter = { reset(): void; snapshot(): ReadMeterSnapshot; stop(): void };

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

type CapacityEntry = { CapacityUnits?: number; ReadCapacityUnits?: number };
type ReadOutput = {
  ConsumedCapacity?: CapacityEntry | CapacityEntry[];
  ScannedCount?: number;
  Count?: number;
  Item?: unknown;
  Responses?: unknown[] | Record<string, unknown[]>;
};

const readUnitsOf = (consumed: ReadOutput['ConsumedCapacity']) =>
  (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
    (sum, entry) => sum + (entry.ReadCapacityUnits ?? entry.CapacityUnits ?? 0),
    0,
  );

function itemsExaminedBy(operation: string, output: ReadOutput): number {
  if (operation === 'GetItem') return output.Item ? 1 : 0;
  if (operation === 'TransactGetItems') return Array.isArray(output.Responses) ? output.Responses.length : 0;
  if (operation === 'BatchGetItem')
    return Object.values(output.Responses ?? {}).reduce((sum: number, items) => sum + (items as unknown[]).length, 0);
  return output.ScannedCount ?? output.Count ?? 0;
}

let meters = 0;

export function meterDynamoReads(): ReadMeter {
  const name = `readMeter${(meters += 1)}`;
  let totals: ReadMeterSnapshot = { calls: 0, itemsExamined: 0, readUnits: 0 };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as { ReturnConsumedCapacity?: string };
      if (READS.has(operation)) input.ReturnConsumedCapacity ??= 'TOTAL';
      totals.calls += 1;
      const result = await next(args);
      if (READS.has(operation)) {
        const output = result.output as ReadOutput;
        totals.itemsExamined += itemsExaminedBy(operation, output);
        totals.readUnits += readUnitsOf(output.ConsumedCapacity);
      }
      return result;
    },
    { step: 'initialize', name },
  );
  return {
    reset: () => {
      totals = { calls: 0, itemsExamined: 0, readUnits: 0 };
    },
    snapshot: () => ({ ...totals }),
    stop: () => {
      dynamo.middlewareStack.remove(name);
    },
  };
}
