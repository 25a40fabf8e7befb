import { refusal, upstreamAnswer } from './answers';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { keyOf } from './table-schema';
import { throttled, transactionConflict } from './wire-errors';
import { drawsOf, expectedWriteLines, failedConditionLines, itemWriteLines } from './write-charges';

/**
 * PutItem, UpdateItem and DeleteItem. The item is held while the write runs (standard writes of
 * one item queue; an item an ongoing transaction holds refuses the write with
 * TransactionConflictException); the budgets of the item, its partition and the index partitions
 * it touches must admit what it is expected to cost (else ThrottlingException); then DynamoDB
 * Local applies it, and the write is charged on its images before and after (the larger image,
 * the index entries it puts and deletes).
 *
 * The images cost as few extra reads as possible: a put or delete asks DynamoDB Local for the old
 * item (ReturnValues ALL_OLD) and an update for the new one (ALL_NEW), and the engine takes the
 * attributes out again when the caller did not ask for them. An update still reads the item
 * before (its old image is not in its answer), and one that asked for UPDATED_* or ALL_OLD after.
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
    const readCurrent = async () => (await engine.currentItems(request, table, [itemKey])).values().next().value;
    const isUpdate = operation === 'UpdateItem';
    const beforeUpdate = isUpdate ? await readCurrent() : undefined;
    const expectedAfter = operation === 'PutItem' ? (input.Item as WireItem) : isUpdate ? 'unknown' : undefined;
    const admission = engine.budgets.reserve(request.database, drawsOf(table, expectedWriteLines(table, itemKey, beforeUpdate, expectedAfter, 'standard'), 0));
    if ('refused' in admission) {
      engine.meters.throttle(operation, admission.refused.reasons);
      return refusal(throttled(admission.refused.reasons));
    }

    const asked = input.ReturnValues ?? 'NONE';
    const wanted = isUpdate ? 'ALL_NEW' : 'ALL_OLD';
    const returnValues = asked === 'NONE' ? wanted : asked;
    const body = returnValues === asked ? request.body : Buffer.from(JSON.stringify({ ...input, ReturnValues: returnValues }));
    const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, body), []);
    if (answer.json) {
      const returned = answer.json.Attributes as WireItem | undefined;
      if (asked === 'NONE') delete answer.json.Attributes;
      const before = isUpdate ? beforeUpdate : returned;
      const after = !isUpdate ? expectedAfter : returnValues === 'ALL_NEW' ? returned : await readCurrent();
      answer.lines = itemWriteLines(table, itemKey, before, after as WireItem | undefined, 'standard');
    } else if (answer.error === 'ConditionalCheckFailedException') {
      answer.lines = failedConditionLines(table, itemKey, isUpdate ? beforeUpdate : await readCurrent());
    }
    admission.reservation.settle(answer.lines);
    return answer;
  } finally {
    hold.release();
  }
}
