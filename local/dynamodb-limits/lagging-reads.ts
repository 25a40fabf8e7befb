import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { keyOf, scalarText, type TableSchema } from './table-schema';

/**
 * The engine's replica lag (replica-lag.ts) on the wire: writes record the images they replace, and eventually
 * consistent reads are answered from them (docs/local-engine.md, "Eventual consistency").
 */

// A request's JSON document: its shape depends on the operation.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Target = { table: TableSchema; key: WireItem };

/** The items a write request writes, by table name and key (a ConditionCheck writes nothing). */
function writtenKeys(operation: string, input: Json): { tableName: string; key: WireItem }[] {
  if (operation === 'PutItem') return [{ tableName: input.TableName, key: input.Item }];
  if (operation === 'UpdateItem' || operation === 'DeleteItem') return [{ tableName: input.TableName, key: input.Key }];
  if (operation === 'BatchWriteItem')
    return Object.entries((input.RequestItems ?? {}) as Record<string, Json[]>).flatMap(([tableName, requests]) =>
      requests.map((r) => ({ tableName, key: r?.PutRequest?.Item ?? r?.DeleteRequest?.Key })),
    );
  if (operation === 'TransactWriteItems')
    return ((input.TransactItems ?? []) as Json[]).flatMap((entry) => {
      if (entry?.Put) return [{ tableName: entry.Put.TableName, key: entry.Put.Item }];
      const write = entry?.Update ?? entry?.Delete;
      return write ? [{ tableName: write.TableName, key: write.Key }] : [];
    });
  return [];
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/**
 * Runs a write with the images it replaces read first, and records them once it succeeded (a write
 * that failed changed nothing). Read before the write and not under its hold: another write
 * slipping in between only makes the recorded image one write older.
 */
export async function recordingWrites(
  engine: Engine,
  request: CallerRequest,
  run: () => Promise<EngineAnswer>,
): Promise<EngineAnswer> {
  const lag = engine.replicaLag;
  if (!lag.on || !WRITES.has(request.operation)) return run();
  const targets: (Target | undefined)[] = [];
  for (const { tableName, key } of writtenKeys(request.operation, request.input)) {
    const table = typeof tableName === 'string' && key ? await engine.schema(request, tableName) : undefined;
    targets.push(table ? { table, key: keyOf(table.key, key) } : undefined);
  }
  const before = await engine.imagesOf(request, targets);
  const answer = await run();
  if (answer.status === 200)
    targets.forEach((target, i) => {
      if (target) lag.wrote(engine.holdKey(request, target.table, target.key), before[i]);
    });
  return answer;
}

/** The top-level attributes a ProjectionExpression names (`a, #b.c` -> a, b), undefined without one. */
function projectedNames(input: Json): Set<string> | undefined {
  if (typeof input.ProjectionExpression !== 'string') return undefined;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  return new Set(
    input.ProjectionExpression.split(',').map((path: string) => {
      const top = path.trim().split(/[.[]/)[0];
      return names[top] ?? top;
    }),
  );
}

const projected = (image: WireItem, names: Set<string> | undefined): WireItem =>
  names ? Object.fromEntries(Object.entries(image).filter(([name]) => names.has(name))) : image;

/**
 * An eventually consistent read's answer as a lagging replica gives it: each item written within
 * the lag replaced by its image from before (GetItem, BatchGetItem), or, on a page, by that image
 * when it was on the same partition (of the index, for an index) and dropped otherwise. An item
 * deleted within the lag is not brought back onto a page (the engine only sees what DynamoDB
 * Local returns).
 */
export async function laggingRead(engine: Engine, request: CallerRequest, answer: EngineAnswer): Promise<EngineAnswer> {
  const { input, operation } = request;
  if (!engine.replicaLag.on || answer.status !== 200 || !answer.json) return answer;
  if (operation === 'GetItem' && !input.ConsistentRead) {
    const table = await engine.schema(request, input.TableName);
    const view = table && engine.replicaLag.lagging(engine.holdKey(request, table, keyOf(table.key, input.Key)));
    if (view) {
      if (view.image) answer.json.Item = projected(view.image, projectedNames(input));
      else delete answer.json.Item;
    }
  }
  if (operation === 'BatchGetItem') await laggingBatch(engine, request, answer.json);
  if ((operation === 'Query' || operation === 'Scan') && !input.ConsistentRead)
    await laggingPage(engine, request, answer.json);
  return answer;
}

async function laggingBatch(engine: Engine, request: CallerRequest, json: Json): Promise<void> {
  const responses = (json.Responses ?? {}) as Record<string, WireItem[]>;
  for (const [tableName, read] of Object.entries((request.input.RequestItems ?? {}) as Json)) {
    const table = await engine.schema(request, tableName);
    if (!table || read.ConsistentRead || !responses[tableName]) continue;
    const holdKey = (item: WireItem) => engine.holdKey(request, table, keyOf(table.key, item));
    const lagged = new Map<string, WireItem | undefined>();
    for (const key of read.Keys as WireItem[]) {
      const view = engine.replicaLag.lagging(holdKey(key));
      if (view) lagged.set(holdKey(key), view.image);
    }
    const current = responses[tableName].filter((item) => !lagged.has(holdKey(item)));
    const stale = [...lagged.values()].filter((image): image is WireItem => image !== undefined);
    responses[tableName] = [...current, ...stale.map((image) => projected(image, projectedNames(read)))];
  }
}

async function laggingPage(engine: Engine, request: CallerRequest, json: Json): Promise<void> {
  const { input } = request;
  const table = await engine.schema(request, input.TableName);
  if (!table || !Array.isArray(json.Items)) return;
  const index = input.IndexName ? table.indexes.find((i) => i.name === input.IndexName) : undefined;
  const partitionKey = (index ?? table.key).partitionKey;
  const names = projectedNames(input);
  const items: WireItem[] = [];
  for (const item of json.Items as WireItem[]) {
    const view = engine.replicaLag.lagging(engine.holdKey(request, table, keyOf(table.key, item)));
    if (!view) items.push(item);
    else if (view.image && scalarText(view.image[partitionKey]) === scalarText(item[partitionKey]))
      items.push(projected(view.image, names ?? new Set(Object.keys(item))));
  }
  json.Items = items;
  if (typeof json.Count === 'number') json.Count = items.length;
}
