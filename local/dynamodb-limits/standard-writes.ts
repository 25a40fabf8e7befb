import { refusal, upstreamAnswer } from './answers';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { keyOf } from './table-schema';
import { throttled, transactionConflict } from './wire-errors';
import { predictedIndexImage } from './update-prediction';
import { drawsOf, expectedWriteLines, failedConditionLines, itemWriteLines, PredictedUpdate } from './write-charges';

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
 * before (its old image is not in its answer), and one that asked for UPDATED_* or ALL_OLD after;
 * a put or delete on a table with global secondary indexes reads it before too, so the index
 * partitions its old entries leave are drawn on before the write runs (a throttled index write
 * holds back the table write).
 */
export async function standardWrite(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const { input, operation } = request;
  const table = await engine.schema(request, input.TableName);
  const key: WireItem | undefined = operation === 'PutItem' ? input.Item : input.Key;
  if (!table || !key)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), []);
  const itemKey = keyOf(table.key, key);

  const hold = await engine.holds.hold([engine.holdKey(request, table, itemKey)], 'write');
  if (hold.conflicts.length > 0) {
    engine.meters.conflict(request.database, operation);
    return refusal(transactionConflict());
  }
  try {
    const readCurrent = async () => (await engine.currentItems(request, table, [itemKey])).values().next().value;
    const isUpdate = operation === 'UpdateItem';
    // The image before the write, read while the item is held: an update's estimate starts from it,
    // and a put or delete on a table with indexes draws on the index partitions its old entries leave.
    const readBefore = isUpdate || table.indexes.length > 0;
    const before = readBefore ? await readCurrent() : undefined;
    const expectedAfter =
      operation === 'PutItem'
        ? (input.Item as WireItem)
        : isUpdate
          ? new PredictedUpdate(predictedIndexImage(table, itemKey, before, input))
          : undefined;
    const admission = engine.budgets.reserve(
      request.database,
      drawsOf(table, expectedWriteLines(table, itemKey, before, expectedAfter, 'standard'), 0),
    );
    if ('refused' in admission) {
      engine.meters.throttle(request.database, operation, admission.refused.reasons);
      return refusal(throttled(admission.refused.reasons));
    }

    const asked = input.ReturnValues ?? 'NONE';
    const wanted = isUpdate ? 'ALL_NEW' : 'ALL_OLD';
    const returnValues = asked === 'NONE' ? wanted : asked;
    const body =
      returnValues === asked ? request.body : Buffer.from(JSON.stringify({ ...input, ReturnValues: returnValues }));
    const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, body), []);
    if (answer.json) {
      const returned = answer.json.Attributes as WireItem | undefined;
      if (asked === 'NONE') delete answer.json.Attributes;
      const imageBefore = isUpdate ? before : returned;
      const after = !isUpdate
        ? (expectedAfter as WireItem | undefined)
        : returnValues === 'ALL_NEW'
          ? returned
          : await readCurrent();
      answer.lines = itemWriteLines(table, itemKey, imageBefore, after, 'standard');
    } else if (answer.error === 'ConditionalCheckFailedException') {
      answer.lines = failedConditionLines(table, itemKey, readBefore ? before : await readCurrent());
    }
    admission.reservation.settle(answer.lines);
    return answer;
  } finally {
    hold.release();
  }
}
