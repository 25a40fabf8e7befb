import { refusal, upstreamAnswer } from './answers';
import { INDEX_ENTRY_OVERHEAD_BYTES, pageReadUnits } from './capacity';
import type { ChargeLine } from './charges';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import { itemBytes, type WireItem, type WireValue } from './item-size';
import { scalarText } from './table-schema';
import { throttled } from './wire-errors';

/**
 * Query and Scan: a page costs the items it examined, filtered-out ones included, summed and
 * rounded up to 4 KB once (index entries for an index, each with its 100 bytes of overhead). The engine cannot see
 * filtered-out items,
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
  if (!table || (input.IndexName && !index))
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), []);
  const mode = input.ConsistentRead ? 'strong' : 'eventual';
  const partitionKey =
    operation === 'Query' ? queriedPartitionKey(input, (index ?? table.key).partitionKey) : undefined;
  const line = (readUnits: number): ChargeLine => ({
    table: table.name,
    index: index?.name,
    partitionKey,
    itemKey: undefined,
    readUnits,
    writeUnits: 0,
  });

  const admission = engine.budgets.reserve(request.database, [
    { ...line(pageReadUnits(0, mode)), resource: index?.arn ?? table.arn, itemIndex: 0 },
  ]);
  if ('refused' in admission) {
    engine.meters.throttle(request.database, operation, admission.refused.reasons);
    return refusal(throttled(admission.refused.reasons));
  }
  const body = Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'TOTAL' }));
  const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, body), []);
  if (answer.json) {
    const consumed = (answer.json.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0;
    answer.lines = [
      line(Math.max(index ? indexPageUnits(input, answer.json, consumed, mode) : consumed, pageReadUnits(0, mode))),
    ];
  }
  admission.reservation.settle(answer.lines);
  return answer;
}

/**
 * An index page with each entry's 100 bytes of overhead (capacity.ts), which DynamoDB Local leaves
 * out (checked: a 4,096-byte entry read is half a unit). Exact when the page returned every entry
 * it examined whole (no filter dropped any, no projection); otherwise DynamoDB Local's figure plus
 * the blocks the overheads of the examined entries fill, which may round up one block more.
 */
function indexPageUnits(
  input: Record<string, unknown>,
  json: Record<string, unknown>,
  consumed: number,
  mode: 'strong' | 'eventual',
): number {
  const examined = typeof json.ScannedCount === 'number' ? json.ScannedCount : 0;
  const items = json.Items as WireItem[] | undefined;
  const whole =
    !input.ProjectionExpression &&
    !input.AttributesToGet &&
    [undefined, 'ALL_ATTRIBUTES', 'ALL_PROJECTED'].includes(input.Select as string | undefined);
  const overhead = examined * INDEX_ENTRY_OVERHEAD_BYTES;
  if (whole && items && items.length === examined)
    return pageReadUnits(items.reduce((sum, item) => sum + itemBytes(item), 0) + overhead, mode);
  return consumed + (examined > 0 ? pageReadUnits(overhead, mode) : 0);
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
    if (name === keyName && placeholder.startsWith(':'))
      return scalarText(input.ExpressionAttributeValues?.[placeholder]);
  }
  return undefined;
}
