import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem, WireValue } from './item-size';
import type { RefusedCondition } from './meters';
import { parseJson } from './upstream';

/**
 * Which condition failed, for the meters: a `ConditionalCheckFailedException` or `TransactionConflictException` of a
 * standard write names its item; a `TransactionCanceledException` names, per cancellation reason other than `None`,
 * the item of that reason. Each is read as the shape of its table key (`T#*#CONTACT#* CONTACT`: the constant segments
 * kept, ids, numbers and times starred), so a meter names an entity, not a row, and the site the request named (the
 * `x-round-site` header the service's client sets locally: lambdas/shared/table/round-site.ts), or `-`.
 */
export const SITE_HEADER = 'x-round-site';

const CONSTANT_SEGMENT = /^[A-Z][A-Z_]*$/;

/** A key value's shape: `#`-separated segments that are upper-case words kept, every other segment `*`. */
export function keyShape(value: WireValue | undefined): string {
  if (!value || !('S' in value)) return '*';
  return value.S.split('#')
    .map((segment) => (CONSTANT_SEGMENT.test(segment) ? segment : '*'))
    .join('#');
}

/** The site a request named, or `-`. */
export function siteOf(request: Pick<CallerRequest, 'headers'>): string {
  const site = request.headers[SITE_HEADER];
  return typeof site === 'string' && site.length > 0 ? site.slice(0, 100) : '-';
}

const STANDARD_REFUSALS = new Set(['ConditionalCheckFailedException', 'TransactionConflictException']);
const ACTIONS = ['Put', 'Update', 'Delete', 'ConditionCheck', 'Get'] as const;

/** The conditions a request's answer refused; none for an answer that refused nothing. */
export async function refusedConditions(
  engine: Engine,
  request: CallerRequest,
  answer: EngineAnswer,
): Promise<RefusedCondition[]> {
  if (!answer.error) return [];
  if (STANDARD_REFUSALS.has(answer.error)) {
    const key = await shapeOf(engine, request, request.input.TableName, request.input.Key ?? request.input.Item);
    return [{ reason: answer.error.replace(/Exception$/, ''), key }];
  }
  if (answer.error !== 'TransactionCanceledException') return [];
  const body = answer.json ?? (answer.raw && parseJson(answer.raw.body));
  const reasons = (body?.CancellationReasons ?? []) as { Code?: string }[];
  const items = (request.input.TransactItems ?? []) as Record<
    string,
    { TableName?: string; Key?: WireItem; Item?: WireItem }
  >[];
  const refused: RefusedCondition[] = [];
  for (const [index, reason] of reasons.entries()) {
    if (!reason.Code || reason.Code === 'None') continue;
    const action = ACTIONS.find((a) => items[index]?.[a]);
    const target = action ? items[index][action] : undefined;
    refused.push({
      reason: reason.Code,
      key: await shapeOf(engine, request, target?.TableName, target?.Key ?? target?.Item),
    });
  }
  return refused;
}

/** The shape of an item's table key: partition key, then sort key, by the table's schema. */
async function shapeOf(
  engine: Engine,
  request: CallerRequest,
  table: unknown,
  item: WireItem | undefined,
): Promise<string> {
  const schema = typeof table === 'string' ? await engine.schema(request, table) : undefined;
  if (!schema || !item) return '?';
  const partition = keyShape(item[schema.key.partitionKey]);
  return schema.key.sortKey ? `${partition} ${keyShape(item[schema.key.sortKey])}` : partition;
}
