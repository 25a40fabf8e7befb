import { errorName, refusal, upstreamAnswer } from './answers';
import type { ChargeLine } from './charges';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { keyOf } from './table-schema';
import { parseJson } from './upstream';
import { throttled, transactionConflict } from './wire-errors';
import { drawsOf, expectedWriteLines, failedConditionLines, itemWriteLines } from './write-charges';

/**
 * PutItem, UpdateItem and DeleteItem. The item is held while the write runs (standard writes of
 * one item queue; an item an ongoing transaction holds refuses the write with
 * TransactionConflictException); its current image is read first, so the write's cost (the larger
 * image, the index entries it puts and deletes) is known; the budgets of the item, its partition
 * and the index partitions it touches must admit it (else ThrottlingException); then DynamoDB
 * Local applies it.
 */
export async function standardWrite(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const { input, operation } = request;
  const table = await engine.schema(request, input.TableName);
  const key: WireItem | undefined = operation === 'PutItem' ? input.Item : input.Key;
  if (!table || !key) return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), []);
  const itemKey = keyOf(table.key, key);

  const hold = await engine.holds.hold([engine.holdKey(request, table, itemKey)], 'write');
  if (hold.conflicts.length > 0) {
    engine.meters.conflict(operation);
    return refusal(transactionConflict());
  }
  try {
    const before = (await engine.currentItems(request, table, [itemKey])).values().next().value;
    const after = operation === 'PutItem' ? (input.Item as WireItem) : operation === 'DeleteItem' ? undefined : 'unknown';
    const admission = engine.budgets.reserve(request.database, drawsOf(table, expectedWriteLines(table, itemKey, before, after, 'standard'), 0));
    if ('refused' in admission) {
      engine.meters.throttle(operation, admission.refused.reasons);
      return refusal(throttled(admission.refused.reasons));
    }
    const answer = await engine.upstream.forward('POST', '/', request.headers, request.body);
    let lines: ChargeLine[] = [];
    if (answer.status === 200) {
      lines = itemWriteLines(table, itemKey, before, after === 'unknown' ? await updatedImage(engine, request, answer.body) : after, 'standard');
    } else if (errorName(parseJson(answer.body)) === 'ConditionalCheckFailedException') {
      lines = failedConditionLines(table, itemKey, before);
    }
    admission.reservation.settle(lines);
    return upstreamAnswer(answer, lines);
  } finally {
    hold.release();
  }
}

/** The item after an UpdateItem: from its answer when the caller asked for ALL_NEW, else read again (the item is still held). */
async function updatedImage(engine: Engine, request: CallerRequest, answerBody: Buffer): Promise<WireItem | undefined> {
  if (request.input.ReturnValues === 'ALL_NEW') return parseJson(answerBody)?.Attributes as WireItem | undefined;
  const table = (await engine.schema(request, request.input.TableName))!;
  return (await engine.currentItems(request, table, [request.input.Key])).values().next().value;
}
