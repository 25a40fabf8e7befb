import { refusal, upstreamAnswer } from './answers';
import type { Draw } from './budgets';
import { keyReadUnits, type ReadMode } from './capacity';
import type { ChargeLine } from './charges';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import { itemBytes, type WireItem } from './item-size';
import { itemIdentity, type TableSchema } from './table-schema';
import {
  addReasons,
  NO_CANCELLATION,
  throttled,
  throttlingReason,
  transactionCanceled,
  transactionConflictReason,
  type ThrottlingReason,
} from './wire-errors';

/**
 * Reads by key: GetItem, BatchGetItem, TransactGetItems. Every requested key is charged, found or
 * not (DynamoDB Local charges a BatchGetItem only for the keys it found), each item rounded up to
 * 4 KB. The engine computes the units from the items it passes back; when a projection hides part
 * of an item, it takes DynamoDB Local's figure for the found items (computed on the whole item:
 * checked) and adds the keys that found nothing.
 */

type TableRead = { ProjectionExpression?: string; AttributesToGet?: string[]; ConsistentRead?: boolean };

const isProjected = (read: TableRead) => !!read.ProjectionExpression || (read.AttributesToGet?.length ?? 0) > 0;

const modeOf = (read: TableRead): ReadMode => (read.ConsistentRead ? 'strong' : 'eventual');

/** What DynamoDB Local says a table's part of an answer consumed. */
function upstreamUnits(json: Record<string, unknown> | undefined, tableName: string): number {
  const consumed = json?.ConsumedCapacity as
    | { TableName?: string; CapacityUnits?: number }
    | { TableName?: string; CapacityUnits?: number }[]
    | undefined;
  const entries = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return entries.filter((e) => e.TableName === tableName).reduce((sum, e) => sum + (e.CapacityUnits ?? 0), 0);
}

function readLine(table: TableSchema, key: WireItem, readUnits: number): ChargeLine {
  const { partitionKey, key: itemKey } = itemIdentity(table.key, key);
  return { table: table.name, index: undefined, partitionKey, itemKey, readUnits, writeUnits: 0 };
}

const draw = (table: TableSchema, line: ChargeLine, itemIndex: number): Draw => ({
  ...line,
  resource: table.arn,
  itemIndex,
});

const withCapacity = (input: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'TOTAL' }));

export async function getItem(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const { input } = request;
  const table = await engine.schema(request, input.TableName);
  if (!table || !input.Key)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), []);
  const mode = modeOf(input);
  const admission = engine.budgets.reserve(request.database, [
    draw(table, readLine(table, input.Key, keyReadUnits(undefined, mode)), 0),
  ]);
  if ('refused' in admission) {
    engine.meters.throttle(request.database, 'GetItem', admission.refused.reasons);
    return refusal(throttled(admission.refused.reasons));
  }
  const answer = upstreamAnswer(
    await engine.upstream.forward(
      'POST',
      '/',
      request.headers,
      isProjected(input) ? withCapacity(input) : request.body,
    ),
    [],
  );
  if (answer.json) {
    const item = answer.json.Item as WireItem | undefined;
    const units = isProjected(input)
      ? upstreamUnits(answer.json, table.name)
      : keyReadUnits(item ? itemBytes(item) : undefined, mode);
    answer.lines = [readLine(table, input.Key, units)];
  }
  admission.reservation.settle(answer.lines);
  return answer;
}

type KeysAndAttributes = TableRead & { Keys: WireItem[] };

/**
 * BatchGetItem: keys refused by a read budget come back in UnprocessedKeys (all of them refused:
 * ThrottlingException); the rest are read, each charged as a GetItem of its own.
 */
export async function batchGetItem(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const requested = (request.input.RequestItems ?? {}) as Record<string, KeysAndAttributes>;
  const tables = await batchTables(engine, request, requested);
  if (!tables)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), [], {
      capacityList: true,
    });
  const split = reserveKeys(engine, request, requested, tables);
  const { admitted, refused, reasons } = split;
  const refusedCount = Object.values(refused).reduce((sum, r) => sum + r.Keys.length, 0);
  if (refusedCount > 0) engine.meters.throttle(request.database, 'BatchGetItem', reasons, refusedCount);
  if (refusedCount > 0 && refusedCount === split.keyCount) return refusal(throttled(reasons));

  const projected = Object.values(admitted).some(isProjected);
  const body = JSON.stringify({
    ...request.input,
    RequestItems: admitted,
    ...(projected && { ReturnConsumedCapacity: 'TOTAL' }),
  });
  const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, Buffer.from(body)), [], {
    capacityList: true,
  });
  if (answer.json) chargeBatchAnswer(answer, answer.json, split, tables);
  // Settled together: the keys' lines are per key, but budgets only sum them per bucket.
  split.reservations.forEach((reservation, index) => reservation.settle(index === 0 ? answer.lines : []));
  return answer;
}

/** Each table's schema, or undefined when a table or its keys are not what the engine reads (passed on untouched). */
async function batchTables(
  engine: Engine,
  request: CallerRequest,
  requested: Record<string, KeysAndAttributes>,
): Promise<Map<string, TableSchema> | undefined> {
  const tables = new Map<string, TableSchema>();
  for (const tableName of Object.keys(requested)) {
    const table = await engine.schema(request, tableName);
    if (!table || !Array.isArray(requested[tableName]?.Keys)) return undefined;
    tables.set(tableName, table);
  }
  return tables;
}

/** A BatchGetItem's keys split by their read budgets: admitted (each with its reservation) or refused. */
type KeySplit = {
  admitted: Record<string, KeysAndAttributes>;
  refused: Record<string, KeysAndAttributes>;
  reservations: { settle: (lines: ChargeLine[]) => void }[];
  reasons: ThrottlingReason[];
  keyCount: number;
};

function reserveKeys(
  engine: Engine,
  request: CallerRequest,
  requested: Record<string, KeysAndAttributes>,
  tables: Map<string, TableSchema>,
): KeySplit {
  const split: KeySplit = { admitted: {}, refused: {}, reservations: [], reasons: [], keyCount: 0 };
  for (const [tableName, read] of Object.entries(requested)) {
    const table = tables.get(tableName)!;
    for (const key of read.Keys) {
      split.keyCount += 1;
      const admission = engine.budgets.reserve(request.database, [
        draw(table, readLine(table, key, keyReadUnits(undefined, modeOf(read))), 0),
      ]);
      const target = 'reservation' in admission ? split.admitted : split.refused;
      (target[tableName] ??= { ...read, Keys: [] }).Keys.push(key);
      if ('reservation' in admission) split.reservations.push(admission.reservation);
      else addReasons(split.reasons, admission.refused.reasons);
    }
  }
  return split;
}

/** The answer's charge lines for the keys read, and the refused keys added to its UnprocessedKeys. */
function chargeBatchAnswer(
  answer: EngineAnswer,
  json: Record<string, unknown>,
  { admitted, refused }: KeySplit,
  tables: Map<string, TableSchema>,
): void {
  const unprocessed = (json.UnprocessedKeys ?? {}) as Record<string, KeysAndAttributes>;
  const responses = (json.Responses ?? {}) as Record<string, WireItem[]>;
  for (const [tableName, read] of Object.entries(admitted)) {
    answer.lines.push(
      ...batchTableLines(
        tables.get(tableName)!,
        read,
        unprocessed[tableName]?.Keys ?? [],
        responses[tableName] ?? [],
        json,
      ),
    );
  }
  for (const [tableName, read] of Object.entries(refused)) {
    const left = (unprocessed[tableName] ??= { ...read, Keys: [] });
    left.Keys = [...left.Keys, ...read.Keys];
  }
  json.UnprocessedKeys = unprocessed;
}

/** One table's part of a BatchGetItem: each processed key charged as a GetItem. */
function batchTableLines(
  table: TableSchema,
  read: KeysAndAttributes,
  unprocessed: WireItem[],
  found: WireItem[],
  json: Record<string, unknown>,
): ChargeLine[] {
  const mode = modeOf(read);
  const left = new Set(unprocessed.map((key) => itemIdentity(table.key, key).key));
  const processed = read.Keys.filter((key) => !left.has(itemIdentity(table.key, key).key));
  if (!isProjected(read)) {
    const byKey = new Map(found.map((item) => [itemIdentity(table.key, item).key, item]));
    return processed.map((key) => {
      const item = byKey.get(itemIdentity(table.key, key).key);
      return readLine(table, key, keyReadUnits(item ? itemBytes(item) : undefined, mode));
    });
  }
  // A projection may hide the keys: DynamoDB Local's total for the found items, plus one block per key that found
  // nothing, spread evenly.
  const total = upstreamUnits(json, table.name) + (processed.length - found.length) * keyReadUnits(undefined, mode);
  return processed.map((key) => readLine(table, key, total / processed.length));
}

type TransactGet = { Get?: TableRead & { TableName: string; Key: WireItem } };

/**
 * TransactGetItems: an item an ongoing transaction or standard write holds cancels it
 * (TransactionConflict), as does one refused by a read budget (ThrottlingError). Otherwise it
 * holds its items for the hold time, like a transactional write, reads them, and is cancelled
 * (TransactionConflict for those items) if a write took one of them meanwhile: the write goes
 * ahead. Each item is a transactional read (2 units per 4 KB, found or not); a cancelled read costs nothing.
 */
export async function transactGet(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const gets = ((request.input.TransactItems ?? []) as TransactGet[]).map((entry) => entry?.Get);
  const tables = await transactGetTables(engine, request, gets);
  if (!tables)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), [], {
      capacityList: true,
    });
  const keys = gets.map((get, index) => engine.holdKey(request, tables[index], get!.Key));
  const conflicted = (indexes: number[]) => {
    engine.meters.conflict(request.database, 'TransactGetItems');
    return refusal(
      transactionCanceled(
        gets.map((_, index) => (indexes.includes(index) ? transactionConflictReason() : NO_CANCELLATION)),
      ),
    );
  };
  const held = keys.flatMap((key, index) => (engine.holds.holderOf(key) !== undefined ? [index] : []));
  if (held.length > 0) return conflicted(held);
  const draws = gets.map((get, index) =>
    draw(tables[index], readLine(tables[index], get!.Key, keyReadUnits(undefined, 'transactional')), index),
  );
  const admission = engine.budgets.reserve(request.database, draws);
  if ('refused' in admission) {
    const { itemIndexes, reasons } = admission.refused;
    engine.meters.throttle(request.database, 'TransactGetItems', reasons, itemIndexes.size);
    return refusal(
      transactionCanceled(
        gets.map((_, index) => (itemIndexes.has(index) ? throttlingReason(itemIndexes.get(index)!) : NO_CANCELLATION)),
      ),
    );
  }
  const reading = engine.holds.read(keys);
  let answer: EngineAnswer;
  try {
    answer = await readWhileHeld(engine, request, gets as NonNullable<TransactGet['Get']>[], tables);
  } finally {
    reading.release();
  }
  const overwritten = reading.conflicts();
  if (answer.json && overwritten.length > 0) {
    admission.reservation.settle([]);
    return conflicted(overwritten);
  }
  admission.reservation.settle(answer.lines);
  return answer;
}

/** Each item's table, or undefined when one is not a Get the engine reads (the request is passed on untouched). */
async function transactGetTables(
  engine: Engine,
  request: CallerRequest,
  gets: TransactGet['Get'][],
): Promise<TableSchema[] | undefined> {
  const tables: TableSchema[] = [];
  for (const get of gets) {
    const table =
      get?.Key && typeof get.TableName === 'string' ? await engine.schema(request, get.TableName) : undefined;
    if (!table) return undefined;
    tables.push(table);
  }
  return tables;
}

/** The read itself, after the hold time, with its charge lines. */
async function readWhileHeld(
  engine: Engine,
  request: CallerRequest,
  gets: NonNullable<TransactGet['Get']>[],
  tables: TableSchema[],
): Promise<EngineAnswer> {
  await engine.sleep(engine.settings.transactionHoldMs);
  const projected = gets.some((get) => isProjected(get));
  const answer = upstreamAnswer(
    await engine.upstream.forward('POST', '/', request.headers, projected ? withCapacity(request.input) : request.body),
    [],
    { capacityList: true },
  );
  if (answer.json) answer.lines = transactGetLines(gets, tables, answer.json, projected);
  return answer;
}

/**
 * Each item of a TransactGetItems as a transactional read of what it found (DynamoDB Local's figure, shared out, when a
 * projection hides part of it).
 */
function transactGetLines(
  gets: NonNullable<TransactGet['Get']>[],
  tables: TableSchema[],
  json: Record<string, unknown>,
  projected: boolean,
): ChargeLine[] {
  const responses = (json.Responses ?? []) as { Item?: WireItem }[];
  return gets.map((get, index) => {
    const table = tables[index];
    if (!projected) {
      const item = responses[index]?.Item;
      return readLine(table, get.Key, keyReadUnits(item ? itemBytes(item) : undefined, 'transactional'));
    }
    const sameTable = tables.filter((t) => t === table).length;
    return readLine(table, get.Key, upstreamUnits(json, table.name) / sameTable);
  });
}
