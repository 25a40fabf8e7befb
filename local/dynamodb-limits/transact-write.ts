import { refusal, upstreamAnswer } from './answers';
import type { CallerRequest, Engine, EngineAnswer } from './engine';
import type { WireItem } from './item-size';
import { requiresNewItem } from './images-before';
import { canonicalText, keyOf, type TableSchema } from './table-schema';
import { updatedImage } from './update-evaluation';
import { NO_CANCELLATION, throttlingReason, transactionCanceled, transactionConflictReason } from './wire-errors';
import { predictedIndexImage, type UpdateInput } from './update-prediction';
import { drawsOf, expectedWriteLines, itemWriteLines, PredictedUpdate } from './write-charges';

type Action = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

type TransactItem = {
  action: Action;
  table: TableSchema;
  key: WireItem;
  item: WireItem | undefined;
  update: UpdateInput;
};

const ACTIONS: Action[] = ['Put', 'Update', 'Delete', 'ConditionCheck'];

/** The request's items, or undefined when one names an unknown table or is malformed (DynamoDB Local then answers). */
async function transactItems(engine: Engine, request: CallerRequest): Promise<TransactItem[] | undefined> {
  const items: TransactItem[] = [];
  for (const entry of (request.input.TransactItems ?? []) as Record<string, Record<string, unknown>>[]) {
    const action = ACTIONS.find((a) => entry?.[a]);
    const body = action && entry[action];
    const table = body && typeof body.TableName === 'string' ? await engine.schema(request, body.TableName) : undefined;
    const written = action === 'Put' ? (body?.Item as WireItem | undefined) : undefined;
    const key = (written ?? body?.Key) as WireItem | undefined;
    if (!action || !table || !key) return undefined;
    items.push({ action, table, key: keyOf(table.key, key), item: written, update: body as UpdateInput });
  }
  return items;
}

/**
 * TransactWriteItems (DynamoDB Developer Guide, "Transaction conflict handling"): its items are
 * held from the start; an item another transaction holds cancels it (TransactionConflict for that
 * item, None for the others); the budgets must admit every item at the transactional rate (else
 * ThrottlingError for the refused items). Then the items stay held for the hold time, DynamoDB
 * Local applies the transaction atomically, and only then are they released: a concurrent
 * transaction on one of them within the window is cancelled, and a plain GetItem meanwhile still
 * reads the committed value.
 */
export async function transactWrite(engine: Engine, request: CallerRequest): Promise<EngineAnswer> {
  const items = await transactItems(engine, request);
  if (!items || items.length === 0)
    return upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), [], {
      capacityList: true,
    });

  const hold = await engine.holds.hold(
    items.map((i) => engine.holdKey(request, i.table, i.key)),
    'transaction',
  );
  if (hold.conflicts.length > 0) {
    engine.meters.conflict(request.database, 'TransactWriteItems');
    return refusal(
      transactionCanceled(
        items.map((_, index) => (hold.conflicts.includes(index) ? transactionConflictReason() : NO_CANCELLATION)),
      ),
    );
  }
  try {
    const targets = items.map((i) => ({ table: i.table, key: i.key, mustBeNew: requiresNewItem(i.table, i.update) }));
    const { images: before, guessedNew } = await engine.imagesBefore(request, targets);
    const expected = items.map((i, index) =>
      drawsOf(
        i.table,
        expectedWriteLines(i.table, i.key, before[index], expectedAfter(i, before[index]), 'transactional'),
        index,
      ),
    );
    const admission = engine.budgets.reserve(request.database, expected.flat());
    if ('refused' in admission) {
      const { itemIndexes, reasons } = admission.refused;
      engine.meters.throttle(request.database, 'TransactWriteItems', reasons, itemIndexes.size);
      return refusal(
        transactionCanceled(
          items.map((_, index) =>
            itemIndexes.has(index) ? throttlingReason(itemIndexes.get(index)!) : NO_CANCELLATION,
          ),
        ),
      );
    }
    await engine.sleep(engine.settings.transactionHoldMs);
    const answer = upstreamAnswer(await engine.upstream.forward('POST', '/', request.headers, request.body), [], {
      capacityList: true,
    });
    if (answer.json) {
      const after = await imagesAfter(engine, request, items, before);
      answer.lines = items.flatMap((i, index) =>
        itemWriteLines(i.table, i.key, before[index], after[index], 'transactional'),
      );
      items.forEach((item, index) => engine.remember(request, item, after[index]));
    } else if (answer.error === 'TransactionCanceledException') {
      // Nothing was written, so every item is as it was; an item guessed new may not have been: read now.
      const found = await engine.imagesOf(
        request,
        items.map((item, index) => (guessedNew.has(index) ? item : undefined)),
      );
      const current = before.map((image, index) => (guessedNew.has(index) ? found[index] : image));
      // DynamoDB documents no figure for a cancelled transaction; the engine charges its prepare
      // phase: each item's standard write of its current image (docs/local-engine.md).
      answer.lines = items.map((i, index) => itemWriteLines(i.table, i.key, current[index], undefined, 'standard')[0]);
      items.forEach((item, index) => engine.remember(request, item, current[index]));
    } else {
      for (const item of items) engine.forgetImage(request, item);
    }
    admission.reservation.settle(answer.lines);
    return answer;
  } finally {
    hold.release();
  }
}

/**
 * What an item is expected to look like after the commit, before it runs: an update's, as far as its index keys go
 * (update-prediction.ts).
 */
function expectedAfter(item: TransactItem, before: WireItem | undefined): WireItem | undefined | PredictedUpdate {
  if (item.action === 'Put') return item.item;
  if (item.action === 'Delete') return undefined;
  return item.action === 'Update'
    ? new PredictedUpdate(predictedIndexImage(item.table, item.key, before, item.update))
    : before;
}

/**
 * The images after the commit: a put's item, a delete's nothing, a condition check's unchanged image, an update's
 * computed from its image before (update-evaluation.ts) or, where it cannot be, read again. With
 * `checkComputedImages` (the suite's engines) every computed image is read too, and one that differs from what
 * DynamoDB Local holds fails the request loudly.
 */
async function imagesAfter(
  engine: Engine,
  request: CallerRequest,
  items: TransactItem[],
  before: (WireItem | undefined)[],
): Promise<(WireItem | undefined)[]> {
  const computed = items.map((item, index) =>
    item.action === 'Update' ? updatedImage(item.key, before[index], item.update) : undefined,
  );
  const check = engine.settings.checkComputedImages;
  const read = await engine.imagesOf(
    request,
    items.map((item, index) => (item.action === 'Update' && (check || !computed[index]) ? item : undefined)),
  );
  let [computedCount, readCount] = [0, 0];
  const after = items.map((item, index) => {
    if (item.action === 'Put') return item.item;
    if (item.action === 'Delete') return undefined;
    if (item.action !== 'Update') return before[index];
    if (!computed[index]) {
      readCount += 1;
      return read[index];
    }
    computedCount += 1;
    if (check && canonicalText(computed[index]) !== canonicalText(read[index]))
      throw new Error(
        `the image computed for an update of ${item.table.name} differs from DynamoDB Local's: ` +
          `${JSON.stringify(computed[index])} against ${JSON.stringify(read[index])}`,
      );
    return computed[index];
  });
  engine.meters.countImages(request.database, 'imagesAfterUpdates', { computed: computedCount, read: readCount });
  return after;
}
