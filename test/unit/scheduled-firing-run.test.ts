import { MIN_ROUND_GAP_MS, runFiring, type FiringRound } from '../../lambdas/handlers/scheduled/firing-run';

/**
 * A due list of send times (ms) on a clock of its own: a round fires every text due at its `now` (at most
 * `perRound` of them), each at the round's time.
 */
function world(dueAt: number[], options: { perRound?: number; roundMs?: number } = {}) {
  let clock = 0;
  const due = [...dueAt].sort((a, b) => a - b);
  const rounds: number[] = [];
  const slept: number[] = [];
  const deps = {
    now: () => clock,
    sleep: async (ms: number) => {
      slept.push(ms);
      clock += ms;
    },
    nextDueAt: async () => (due.length === 0 ? undefined : new Date(due[0])),
    fire: async (now: Date, deadline: number): Promise<FiringRound> => {
      rounds.push(now.getTime());
      const ready = due.filter((t) => t <= now.getTime()).slice(0, options.perRound ?? Infinity);
      due.splice(0, ready.length);
      clock = Math.min(clock + (options.roundMs ?? 100), Math.max(clock, deadline));
      const maxLateMs = Math.max(0, ...ready.map((t) => now.getTime() - t));
      return { sent: ready.length, handled: ready.length, maxLateMs };
    },
  };
  return { deps, rounds, slept, due, advance: (ms: number) => (clock += ms) };
}

const at = (ms: number) => new Date(ms);

describe('one run of the firing of scheduled texts', () => {
  it('looks once and fires nothing when nothing falls due before the window closes', async () => {
    // Prepare
    const { deps, rounds, slept } = world([50_000]);
    // Act
    const result = await runFiring(at(40_000), at(45_000), deps);
    // Assess
    expect(result).toEqual({ rounds: 0, sent: 0, handled: 0, maxLateMs: 0 });
    expect(rounds).toEqual([]);
    expect(slept).toEqual([]);
  });

  it('fires what is due at once, then waits for each later text of the window and fires it at its time', async () => {
    // Prepare
    const { deps, rounds, due } = world([-30_000, -1_000, 12_000, 12_000, 30_000, 41_000]);
    // Act
    const result = await runFiring(at(40_000), at(45_000), deps);
    // Assess
    expect(rounds).toEqual([0, 12_000, 30_000]);
    expect(result).toEqual({ rounds: 3, sent: 5, handled: 5, maxLateMs: 30_000 });
    // 41 s is past the window: the next minute's run takes it.
    expect(due).toEqual([41_000]);
  });

  it('rounds at least a second apart while a round leaves due texts behind, and stops at the deadline', async () => {
    // Prepare: 10 due texts, 3 per round, a round taking 2 s.
    const { deps, rounds, due } = world(Array(10).fill(0), { perRound: 3, roundMs: 2_000 });
    // Act
    const result = await runFiring(at(40_000), at(5_000), deps);
    // Assess: rounds at 0, 2 and 4 s; the third ends at the deadline, the last text stays for the next run.
    expect(rounds).toEqual([0, 2_000, 4_000]);
    expect(result.sent).toBe(9);
    expect(due).toHaveLength(1);
  });

  it('keeps a second between rounds that finish at once', async () => {
    // Prepare: 2 per round, rounds of no time at all.
    const { deps, rounds } = world([0, 0, 0, 0, 0], { perRound: 2, roundMs: 0 });
    // Act
    await runFiring(at(40_000), at(45_000), deps);
    // Assess
    expect(rounds).toEqual([0, MIN_ROUND_GAP_MS, 2 * MIN_ROUND_GAP_MS]);
  });

  it('stops when a round fired nothing of what was due, leaving it to the next run', async () => {
    // Prepare: a text no round can fire (a throttle, a carrier that would not take it).
    const { deps, rounds } = world([0, 20_000], { perRound: 0 });
    // Act
    const result = await runFiring(at(40_000), at(45_000), deps);
    // Assess
    expect(rounds).toEqual([0]);
    expect(result).toEqual({ rounds: 1, sent: 0, handled: 0, maxLateMs: 0 });
  });
});
