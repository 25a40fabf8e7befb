import { refusal, upstreamAnswer } from './answers';
import { pageReadUnits } from './capacity';
import type { ChargeLine } from './charges';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireValue } from './item-size';
import { scalarText } from './table-schema';
import { throttled } from './wire-errors';

/**
 * Query and Scan: a page costs the items it examined, filtered-out ones included, summed and
 * rounded up to 4 KB once (index entries for an index). The engine cannot see filtered-out items,
 * so it takes DynamoDB Local's own figure, which is exactly that (checked: a query of ten items
 * totalling 40.8 KB that a filter all drops reports 11 units strongly consistent, 5.5 eventually),
 * and raises a page that examined nothing to one block, which DynamoDB charges and DynamoDB Local
 * does not. A Query draws on its partition's read budget (the index partition's for an index); a
 * Scan, which spans partitions, on none.
 */
export async function pageRead(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const { input, operation } = request;
  const table = await engine.schema(request, input.TableName);
  const index = table && input.IndexName ? table.indexes.find((i) => i.name === input.IndexName) : undefined;
  if (!table || (input.IndexName && !index)) return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), []);
  const mode = input.ConsistentRead ? 'strong' : 'eventual';
  const partitionKey = operation === 'Query' ? queriedPartitionKey(input, (index ?? table.key).partitionKey) : undefined;
  const line = (readUnits: number): ChargeLine => ({ table: table.name, index: index?.name, partitionKey, itemKey: undefined, readUnits, writeUnits: 0 });

  const admission = engine.budgets.reserve(request.database, [{ ...line(pageReadUnits(0, mode)), resource: index?.arn ?? table.arn, itemIndex: 0 }]);
  if ('refused' in admission) {
    engine.meters.throttle(operation, admission.refused.reasons);
    return refusal(throttled(admission.refused.reasons));
  }
  const body = Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'TOTAL' }));
  const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, body), []);
  if (answer.json) {
    const consumed = (answer.json.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0;
    answer.lines = [line(Math.max(consumed, pageReadUnits(0, mode)))];
  }
  admission.reservation.settle(answer.lines);
  return answer;
}

type QueryInput = {
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, WireValue>;
  KeyConditions?: Record<string, { ComparisonOperator?: string; AttributeValueList?: WireValue[] }>;
};

/** The partition-key value a Query names (`#pk = :pk` in its key condition, or the legacy KeyConditions). */
export function queriedPartitionKey(input: QueryInput, keyName: string): string | undefined {
  const legacy = input.KeyConditions?.[keyName];
  if (legacy?.ComparisonOperator === 'EQ') return scalarText(legacy.AttributeValueList?.[0]);
  const names = input.ExpressionAttributeNames ?? {};
  for (const [, left, right] of (input.KeyConditionExpression ?? '').matchAll(/([#:]?[\w.-]+)\s*=\s*([#:]?[\w.-]+)/g)) {
    const [operand, placeholder] = left.startsWith(':') ? [right, left] : [left, right];
    const name = operand.startsWith('#') ? names[operand] : operand;
    if (name === keyName && placeholder.startsWith(':')) return scalarText(input.ExpressionAttributeValues?.[placeholder]);
  }
  return undefined;
}

