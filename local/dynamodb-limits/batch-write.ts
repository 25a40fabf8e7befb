import { refusal, upstreamAnswer } from './answers';
import type { ChargeLine } from './charges';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { itemIdentity, keyOf, type TableSchema } from './table-schema';
import { addReasons, throttled, type ThrottlingReason } from './wire-errors';
import { drawsOf, expectedWriteLines, itemWriteLines } from './write-charges';

type WriteRequest = { PutRequest?: { Item: WireItem }; DeleteRequest?: { Key: WireItem } };

type BatchItem = {
  tableName: string;
  table: TableSchema;
  request: WriteRequest;
  key: WireItem;
  item: WireItem | undefined;
};

/**
 * BatchWriteItem: each put or delete is a standard write of its own (serializable with
 * transactions one by one, not as a unit). A request on an item an ongoing transaction holds is
 * not attempted and comes back in UnprocessedItems, as one refused for throughput does (the
 * engine's choice: docs/local-engine.md); if every request is refused for throughput, the batch
 * is answered with ThrottlingException, as DynamoDB does. The rest go to DynamoDB Local.
 */
export async function batchWrite(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const items = await batchItems(engine, request);
  if (!items)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), [], {
      capacityList: true,
    });

  const hold = await engine.holds.hold(
    items.map((i) => engine.holdKey(request, i.table, i.key)),
    'write',
    { skipConflicts: true },
  );
  try {
    if (hold.conflicts.length > 0) engine.meters.conflict(request.database, 'BatchWriteItem');
    const { images: before } = await engine.imagesBefore(
      request,
      items.map((item, index) => (hold.conflicts.includes(index) ? undefined : { ...item, mustBeNew: false })),
    );
    const reserved = reserveWrites(engine, request, items, hold.conflicts, before);
    if ('refused' in reserved) return reserved.refused;
    return await writeReserved(engine, request, items, reserved.reservations, before);
  } finally {
    hold.release();
  }
}

type Reservation = { settle: (lines: ChargeLine[]) => void };

/**
 * Each write not held by a transaction draws on its budgets; one refused is left unprocessed (and all of them refused
 * is a ThrottlingException).
 */
function reserveWrites(
  engine: Engine,
  request: CallerRequest,
  items: BatchItem[],
  conflicts: number[],
  before: (WireItem | undefined)[],
): { reservations: (Reservation | undefined)[] } | { refused: EngineAnswer } {
  const throttledItems = new Set<number>();
  const reasons: ThrottlingReason[] = [];
  const reservations = items.map((item, index) => {
    if (conflicts.includes(index)) return undefined;
    const draws = drawsOf(
      item.table,
      expectedWriteLines(item.table, item.key, before[index], item.item, 'standard'),
      index,
    );
    const admission = engine.budgets.reserve(request.database, draws);
    if ('reservation' in admission) return admission.reservation;
    throttledItems.add(index);
    addReasons(reasons, admission.refused.reasons);
    return undefined;
  });
  if (throttledItems.size > 0) engine.meters.throttle(request.database, 'BatchWriteItem', reasons, throttledItems.size);
  if (throttledItems.size === items.length) return { refused: refusal(throttled(reasons)) };
  return { reservations };
}

/** The reserved writes sent to DynamoDB Local, each charged if written; the others join its UnprocessedItems. */
async function writeReserved(
  engine: Engine,
  request: CallerRequest,
  items: BatchItem[],
  reservations: (Reservation | undefined)[],
  before: (WireItem | undefined)[],
): Promise<EngineAnswer> {
  const attempted = items.flatMap((item, index) => (reservations[index] ? [{ item, index }] : []));
  const unprocessed = items.filter((_, index) => !reservations[index]);
  let lines: ChargeLine[] = [];
  let json: Record<string, unknown> = { UnprocessedItems: {} };
  if (attempted.length > 0) {
    const upstream = await engine.upstream.forward(
      'POST',
      '/',
      request.headers,
      Buffer.from(JSON.stringify({ ...request.input, RequestItems: requestItems(attempted.map((a) => a.item)) })),
    );
    const answer = upstreamAnswer(upstream, []);
    if (!answer.json) {
      for (const { item, index } of attempted) {
        reservations[index]!.settle([]);
        engine.forgetImage(request, item);
      }
      return answer;
    }
    json = answer.json;
    const leftOver = leftOverKeys(json.UnprocessedItems as Record<string, WriteRequest[]> | undefined, items);
    for (const { item, index } of attempted) {
      const written = !leftOver.has(`${item.tableName}\u0001${itemIdentity(item.table.key, item.key).key}`);
      const itemLines = written ? itemWriteLines(item.table, item.key, before[index], item.item, 'standard') : [];
      engine.remember(request, item, written ? item.item : before[index]);
      reservations[index]!.settle(itemLines);
      lines = lines.concat(itemLines);
    }
  }
  json.UnprocessedItems = mergeUnprocessed(
    json.UnprocessedItems as Record<string, WriteRequest[]> | undefined,
    unprocessed,
  );
  return { status: 200, json, lines, capacityList: true };
}

async function batchItems(engine: Engine, request: CallerRequest): Promise<BatchItem[] | undefined> {
  const items: BatchItem[] = [];
  for (const [tableName, requests] of Object.entries(
    (request.input.RequestItems ?? {}) as Record<string, WriteRequest[]>,
  )) {
    const table = await engine.schema(request, tableName);
    if (!table || !Array.isArray(requests)) return undefined;
    for (const write of requests) {
      const key = write?.PutRequest?.Item ?? write?.DeleteRequest?.Key;
      if (!key) return undefined;
      items.push({ tableName, table, request: write, key: keyOf(table.key, key), item: write.PutRequest?.Item });
    }
  }
  return items.length > 0 ? items : undefined;
}

function requestItems(items: BatchItem[]): Record<string, WriteRequest[]> {
  const byTable: Record<string, WriteRequest[]> = {};
  for (const item of items) (byTable[item.tableName] ??= []).push(item.request);
  return byTable;
}

function leftOverKeys(unprocessed: Record<string, WriteRequest[]> | undefined, items: BatchItem[]): Set<string> {
  const keys = new Set<string>();
  for (const [tableName, requests] of Object.entries(unprocessed ?? {})) {
    const table = items.find((i) => i.tableName === tableName)?.table;
    if (!table) continue;
    for (const write of requests) {
      const key = write.PutRequest?.Item ?? write.DeleteRequest?.Key;
      if (key) keys.add(`${tableName}\u0001${itemIdentity(table.key, key).key}`);
    }
  }
  return keys;
}

function mergeUnprocessed(
  fromUpstream: Record<string, WriteRequest[]> | undefined,
  ours: BatchItem[],
): Record<string, WriteRequest[]> {
  const merged: Record<string, WriteRequest[]> = { ...(fromUpstream ?? {}) };
  for (const item of ours) (merged[item.tableName] = [...(merged[item.tableName] ?? [])]).push(item.request);
  return merged;
}
