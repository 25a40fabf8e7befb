import { startTextSettlement } from '../../local/text-settlement';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';

jest.mock('../../lambdas/contexts/texting/settlement', () => ({ settleUnknownOutcomes: jest.fn() }));
const sweep = settleUnknownOutcomes as jest.MockedFunction<typeof settleUnknownOutcomes>;

beforeEach(() => {
  jest.useFakeTimers();
  sweep.mockReset();
});
afterEach(() => jest.useRealTimers());

describe('the local runtime runs the settlement sweep on a timer', () => {
  it('every quarter of a short grace period, with that grace period, one run at a time, and a tick during a run runs once it ends', async () => {
    // Prepare: the first run never finishes until released
    let release!: () => void;
    sweep.mockImplementationOnce(
      () => new Promise((resolve) => (release = () => resolve({ examined: 0, failed: 0, skipped: 0 }))),
    );
    sweep.mockResolvedValue({ examined: 0, failed: 0, skipped: 0 });
    const settlement = await startTextSettlement(2000, jest.fn());

    // Act: two intervals pass while the first run is still going
    await jest.advanceTimersByTimeAsync(1000);
    // Assess: no second run meanwhile
    expect(sweep).toHaveBeenCalledTimes(1);
    expect(sweep).toHaveBeenCalledWith({ graceMs: 2000 });

    // Act: the first run ends
    release();
    await jest.advanceTimersByTimeAsync(0);
    // Assess: the ticks it outlasted make one run at once, not two, and not a whole interval later
    expect(sweep).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(500);
    expect(sweep).toHaveBeenCalledTimes(3);
    await settlement.stop();
    await jest.advanceTimersByTimeAsync(5000);
    expect(sweep).toHaveBeenCalledTimes(3);
  });

  it('at most every minute with the default hour, and logs a failed run without stopping', async () => {
    // Prepare
    sweep
      .mockRejectedValueOnce(new Error('table unavailable'))
      .mockResolvedValue({ examined: 0, failed: 0, skipped: 0 });
    const logError = jest.fn();
    const settlement = await startTextSettlement(3_600_000, logError);
    // Act
    await jest.advanceTimersByTimeAsync(59_999);
    const beforeAMinute = sweep.mock.calls.length;
    await jest.advanceTimersByTimeAsync(60_001);
    // Assess
    expect(beforeAMinute).toBe(0);
    expect(sweep).toHaveBeenCalledTimes(2);
    expect(logError).toHaveBeenCalledWith('Text settlement sweep failed: table unavailable');
    await settlement.stop();
  });
});
