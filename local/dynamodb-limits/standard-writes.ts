import { refusal, upstreamAnswer } from './answers';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { requiresNewItem } from './images-before';
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
 * attributes out again when the caller did not ask for them. An update still needs the item
 * before (its old image is not in its answer), and one that asked for UPDATED_* or ALL_OLD reads it
 * after; a put or delete on a table with global secondary indexes needs it before too, so the index
 * partitions its old entries leave are drawn on before the write runs (a throttled index write
 * holds back the table write). The image before is read unless the engine knows it or the write's
 * condition says there is none (images-before.ts).
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
    const target = { table, key: itemKey, mustBeNew: requiresNewItem(table, input) };
    const readCurrent = async () => (await engine.imagesOf(request, [target]))[0];
    const isUpdate = operation === 'UpdateItem';
    // The image before the write, while the item is held: an update's estimate starts from it, and a put or delete on
    // a table with indexes draws on the index partitions its old entries leave. Known or guessed where it can be
    // (images-before.ts), read otherwise.
    const needsBefore = isUpdate || table.indexes.length > 0;
    const { images, guessedNew } = needsBefore
      ? await engine.imagesBefore(request, [target])
      : { images: [undefined], guessedNew: new Set<number>() };
    const before = images[0];
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
      engine.remember(request, target, after);
    } else if (answer.error === 'ConditionalCheckFailedException') {
      // Refused, so the item is as it was: as known or read before, or (a guess that it was new) read now.
      const found = needsBefore && !guessedNew.has(0) ? before : await readCurrent();
      answer.lines = failedConditionLines(table, itemKey, found);
      engine.remember(request, target, found);
    } else {
      engine.forgetImage(request, target);
    }
    admission.reservation.settle(answer.lines);
    return answer;
  } finally {
    hold.release();
  }
}
