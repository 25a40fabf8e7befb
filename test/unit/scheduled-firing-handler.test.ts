import type { Context } from 'aws-lambda';
import { metrics } from '../../lambdas/shared/aws';
import { SCHEDULED_TEXT_LATENESS_METRIC } from '../../lambdas/handlers/scheduled/firing-metrics';
import { RUN_DEADLINE_MS } from '../../lambdas/handlers/scheduled/firing-run';

// The handler builds its carrier at load; the firing itself is the texting context's (tested there).
process.env.CARRIER = 'loopback';
jest.mock('../../lambdas/contexts/texting/scheduled-texts', () => ({ fireDueTexts: jest.fn() }));
jest.mock('../../lambdas/contexts/texting/next-due', () => ({ nextDueAt: jest.fn() }));
const { fireDueTexts } = jest.requireMock('../../lambdas/contexts/texting/scheduled-texts') as {
  fireDueTexts: jest.Mock;
};
const { nextDueAt } = jest.requireMock('../../lambdas/contexts/texting/next-due') as { nextDueAt: jest.Mock };
const { handler } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../../lambdas/handlers/scheduled/fire-scheduled-texts') as typeof import('../../lambdas/handlers/scheduled/fire-scheduled-texts');

const contextWith = (remainingMs: number) =>
  ({
    awsRequestId: 'req-1',
    functionName: 'fire-scheduled-texts',
    getRemainingTimeInMillis: () => remainingMs,
  }) as unknown as Context;

const fired = (sent: number, maxLateMs: number) => ({
  examined: sent,
  sent,
  canceled: 0,
  skipped: 0,
  errors: 0,
  maxLateMs,
});

beforeEach(() => jest.clearAllMocks());

describe('the firing of scheduled texts, as EventBridge runs it', () => {
  it('fires what is due with a deadline inside the timeout and reports how late its latest text went', async () => {
    // Prepare: texts due a while ago, then nothing more.
    const addMetric = jest.spyOn(metrics, 'addMetric');
    nextDueAt.mockResolvedValueOnce(new Date(Date.now() - 70_000)).mockResolvedValue(undefined);
    fireDueTexts.mockResolvedValueOnce(fired(3, 72_500));
    const before = Date.now();
    // Act
    const result = await handler({}, contextWith(55_000));
    // Assess
    expect(result).toEqual({ rounds: 1, sent: 3, handled: 3, maxLateMs: 72_500 });
    const [[options]] = fireDueTexts.mock.calls as [[{ deadline: number; carrier: { name: string } }]];
    expect(options.carrier.name).toBe('loopback');
    expect(options.deadline).toBeGreaterThanOrEqual(before + RUN_DEADLINE_MS);
    expect(options.deadline).toBeLessThanOrEqual(Date.now() + RUN_DEADLINE_MS);
    expect(addMetric.mock.calls.filter(([name]) => name === SCHEDULED_TEXT_LATENESS_METRIC)).toEqual([
      [SCHEDULED_TEXT_LATENESS_METRIC, 'Seconds', 72.5],
    ]);
    addMetric.mockRestore();
  });

  it('keeps the deadline clear of the timeout when the function has less time left than a run takes', async () => {
    // Prepare
    nextDueAt.mockResolvedValueOnce(new Date(Date.now() - 1_000)).mockResolvedValue(undefined);
    fireDueTexts.mockResolvedValueOnce(fired(1, 1_000));
    const before = Date.now();
    // Act
    await handler({}, contextWith(20_000));
    // Assess: 20 s left, 8 s of them kept for the last texts' carrier calls and writes.
    const [[options]] = fireDueTexts.mock.calls as [[{ deadline: number }]];
    expect(options.deadline).toBeGreaterThanOrEqual(before + 12_000);
    expect(options.deadline).toBeLessThanOrEqual(Date.now() + 12_000);
  });

  it('looks at the due list once and fires nothing in a quiet minute, emitting no lateness', async () => {
    // Prepare
    const addMetric = jest.spyOn(metrics, 'addMetric');
    nextDueAt.mockResolvedValue(new Date(Date.now() + 3_600_000));
    // Act
    const result = await handler({}, contextWith(55_000));
    // Assess
    expect(result).toEqual({ rounds: 0, sent: 0, handled: 0, maxLateMs: 0 });
    expect(nextDueAt).toHaveBeenCalledTimes(1);
    expect(fireDueTexts).not.toHaveBeenCalled();
    expect(addMetric.mock.calls.map(([name]) => name)).not.toContain(SCHEDULED_TEXT_LATENESS_METRIC);
    addMetric.mockRestore();
  });
});
