import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { logger, metrics } from '../../lambdas/shared/aws';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';
import { SETTLEMENT_FAILED_METRIC, SETTLEMENT_GRACE_MS } from '../../lambdas/contexts/texting/settlement-grace';
import { UNSETTLED_SHARDS, unsettledPk } from '../../lambdas/contexts/texting/messages';

jest.mock('../../lambdas/contexts/texting/delivery-status', () => ({ updateMessageStatus: jest.fn() }));
const settle = updateMessageStatus as jest.MockedFunction<typeof updateMessageStatus>;

/**
 * The settlement sweep's run (texting/settlement.ts) over a worklist the mock serves: what it reads, what it
 * settles, what it counts and logs. Its races with callbacks are integration/text-settlement.test.ts's.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const now = new Date('2026-11-28T12:00:00.000Z');
const text = (n: number) => ({ tenantId: `org-${n % 3}`, id: `msg-${n}` });
const answered = (changed: boolean) => ({ changed }) as Awaited<ReturnType<typeof updateMessageStatus>>;
/** The worklist: `perShard(shard)` texts on each shard, served in pages of `pageSize`. */
function serveWorklist(perShard: (shard: number) => number, pageSize = 100): void {
  ddb.on(QueryCommand).callsFake(({ ExpressionAttributeValues, ExclusiveStartKey }) => {
    const shard = Number(String(ExpressionAttributeValues[':pk']).replace(unsettledPk(0).slice(0, -1), ''));
    const start = (ExclusiveStartKey?.n as number | undefined) ?? 0;
    const items = Array.from({ length: perShard(shard) }, (_, i) => text(shard * 1_000 + i)).slice(start);
    const page = items.slice(0, pageSize);
    return { Items: page, LastEvaluatedKey: items.length > pageSize ? { n: start + pageSize } : undefined };
  });
}

let addMetric: jest.SpyInstance;
let logError: jest.SpyInstance;
beforeEach(() => {
  ddb.reset();
  settle.mockReset();
  addMetric = jest.spyOn(metrics, 'addMetric').mockImplementation(() => metrics);
  logError = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

describe('the settlement sweep', () => {
  it('reads every worklist shard up to the grace cutoff, on the worklist index', async () => {
    // Prepare
    serveWorklist(() => 0);
    // Act
    await settleUnknownOutcomes({ now, graceMs: 60_000 });
    await settleUnknownOutcomes({ now });
    // Assess: one query per shard and run, each below its cutoff
    const queries = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(queries).toHaveLength(2 * UNSETTLED_SHARDS);
    expect(new Set(queries.slice(0, UNSETTLED_SHARDS).map((q) => q.ExpressionAttributeValues![':pk']))).toEqual(
      new Set(Array.from({ length: UNSETTLED_SHARDS }, (_, shard) => unsettledPk(shard))),
    );
    expect(queries[0]).toMatchObject({
      IndexName: 'gsi2',
      KeyConditionExpression: '#pk = :pk AND #sk < :cutoff',
      ExpressionAttributeNames: { '#pk': 'gsi2pk', '#sk': 'gsi2sk' },
      ExpressionAttributeValues: { ':cutoff': '2026-11-28T11:59:00.000Z' },
    });
    expect(queries[UNSETTLED_SHARDS].ExpressionAttributeValues![':cutoff']).toBe(
      new Date(now.getTime() - SETTLEMENT_GRACE_MS).toISOString(),
    );
  });

  it('fails and refunds each text still unsettled, page after page, and counts those it changed', async () => {
    // Prepare: 3 texts on shard 0 in pages of 2, 1 on shard 5 that a callback settled first
    serveWorklist((shard) => (shard === 0 ? 3 : shard === 5 ? 1 : 0), 2);
    settle.mockImplementation(async (_, ref) => answered((ref as { messageId: string }).messageId !== 'msg-5000'));
    // Act
    const result = await settleUnknownOutcomes({ now });
    // Assess
    expect(result).toEqual({ examined: 4, failed: 3, skipped: 0 });
    const settled = settle.mock.calls.map(
      ([tenantId, ref]) => `${tenantId}/${(ref as { messageId: string }).messageId}`,
    );
    expect(settled.sort()).toEqual(['org-0/msg-0', 'org-1/msg-1', 'org-2/msg-2', 'org-2/msg-5000']);
    expect(settle.mock.calls.every(([, , status]) => status === 'failed')).toBe(true);
    expect(settle.mock.calls[0][3]).toEqual({ failureReason: 'carrier_outcome_unknown', onlyIfUnsettled: true });
    const shardZero = ddb
      .commandCalls(QueryCommand)
      .filter((c) => c.args[0].input.ExpressionAttributeValues![':pk'] === unsettledPk(0));
    expect(shardZero.map((c) => c.args[0].input.ExclusiveStartKey)).toEqual([undefined, { n: 2 }]);
    expect(addMetric).toHaveBeenCalledWith('TextsSettledAsFailed', 'Count', 3);
    expect(addMetric).not.toHaveBeenCalledWith(SETTLEMENT_FAILED_METRIC, expect.anything(), expect.anything());
  });

  it('skips a text it cannot settle, logging its ids and counting it, and settles the texts after it', async () => {
    // Prepare: the first of 3 texts throws every time
    serveWorklist((shard) => (shard === 0 ? 3 : 0));
    settle.mockImplementation(async (_, ref) => {
      if ((ref as { messageId: string }).messageId === 'msg-0') throw new TypeError('a poison row');
      return answered(true);
    });
    // Act
    const result = await settleUnknownOutcomes({ now });
    // Assess
    expect(result).toEqual({ examined: 3, failed: 2, skipped: 1 });
    expect(settle).toHaveBeenCalledTimes(3);
    expect(addMetric).toHaveBeenCalledWith(SETTLEMENT_FAILED_METRIC, 'Count', 1);
    expect(logError).toHaveBeenCalledWith(expect.any(String), {
      tenantId: 'org-0',
      messageId: 'msg-0',
      error: { name: 'TypeError', message: 'a poison row' },
    });
  });

  it('tries a text again while the table is busy, and skips it once the tries are spent', async () => {
    // Prepare: msg-0 meets a conflict once, msg-1 every time
    serveWorklist((shard) => (shard === 0 ? 2 : 0));
    const busy = Object.assign(new Error('conflict'), { name: 'TransactionConflictException' });
    let firstTry = true;
    settle.mockImplementation(async (_, ref) => {
      const { messageId } = ref as { messageId: string };
      if (messageId === 'msg-1' || (messageId === 'msg-0' && firstTry)) {
        if (messageId === 'msg-0') firstTry = false;
        throw busy;
      }
      return answered(true);
    });
    // Act
    const result = await settleUnknownOutcomes({ now });
    // Assess: 2 tries for msg-0, 5 for msg-1
    expect(result).toEqual({ examined: 2, failed: 1, skipped: 1 });
    expect(settle).toHaveBeenCalledTimes(7);
  });

  it('examines at most maxTexts texts, reading no page past them, and nothing once its time budget is spent', async () => {
    // Prepare: 3 texts per shard, pages of 1; the clock stands still
    serveWorklist(() => 3, 1);
    settle.mockResolvedValue(answered(true));
    jest.spyOn(Date, 'now').mockReturnValue(now.getTime());
    // Act
    const capped = await settleUnknownOutcomes({ now, maxTexts: 5, shardReaders: 1 });
    const cappedQueries = ddb.commandCalls(QueryCommand).length;
    ddb.resetHistory();
    const outOfTime = await settleUnknownOutcomes({ now, budgetMs: 0 });
    // Assess: the 6th page never read; no query at all once the budget (here none) is spent
    expect(capped).toEqual({ examined: 5, failed: 5, skipped: 0 });
    expect(cappedQueries).toBe(5);
    expect(outOfTime).toEqual({ examined: 0, failed: 0, skipped: 0 });
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
    expect(addMetric).toHaveBeenCalledTimes(1);
  });

  it('settles nothing from a page that holds no items', async () => {
    // Prepare
    ddb.on(QueryCommand).resolves({});
    // Act + Assess
    expect(await settleUnknownOutcomes({ now })).toEqual({ examined: 0, failed: 0, skipped: 0 });
    expect(settle).not.toHaveBeenCalled();
  });

  it('reads shardReaders shards at once and settles textsPerShard texts of each at once', async () => {
    // Prepare: every settlement waits until released, so the ones in flight can be counted
    serveWorklist(() => 10);
    let inFlight = 0;
    let most = 0;
    settle.mockImplementation(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return answered(true);
    });
    // Act
    const narrow = await settleUnknownOutcomes({ now, shardReaders: 3, textsPerShard: 2 });
    const mostNarrow = most;
    most = 0;
    const wide = await settleUnknownOutcomes({ now });
    // Assess: all settled both times, 3 x 2 in flight at most, then the defaults' 16 x 4
    expect(narrow.failed).toBe(10 * UNSETTLED_SHARDS);
    expect(wide.failed).toBe(10 * UNSETTLED_SHARDS);
    expect(mostNarrow).toBe(6);
    expect(most).toBe(16 * 4);
  });
});
