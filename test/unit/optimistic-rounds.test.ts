import { TemporarilyUnavailableError } from '../../lambdas/shared/errors';
import { LOST_RACE, optimisticRounds } from '../../lambdas/shared/table/optimistic-rounds';

const BOUND = { what: 'test write', rounds: 3, site: 'test.write' };

describe('optimisticRounds', () => {
  it('answers the first round that does not lose its race, after reading again for each that did', async () => {
    // Prepare
    const seen: number[] = [];
    // Act
    const result = await optimisticRounds(BOUND, async (round) => {
      seen.push(round);
      return round < 2 ? LOST_RACE : 'written';
    });
    // Assess
    expect(result).toBe('written');
    expect(seen).toEqual([0, 1, 2]);
  });

  it('answers 503 with Retry-After once the bound is spent, naming what kept changing for the log', async () => {
    // Prepare
    let rounds = 0;
    // Act
    const outcome = optimisticRounds(BOUND, async () => {
      rounds += 1;
      return LOST_RACE;
    });
    // Assess
    await expect(outcome).rejects.toBeInstanceOf(TemporarilyUnavailableError);
    await expect(outcome).rejects.toMatchObject({
      status: 503,
      code: 'temporarily_unavailable',
      reason: 'test write: lost the race 3 times',
      headers: { 'Retry-After': '1' },
    });
    expect(rounds).toBe(3);
  });

  it('passes any other error through at once: a bound is for races, not for bugs', async () => {
    // Prepare
    let rounds = 0;
    // Act
    const outcome = optimisticRounds(BOUND, async () => {
      rounds += 1;
      throw new Error('not a race');
    });
    // Assess
    await expect(outcome).rejects.toThrow('not a race');
    expect(rounds).toBe(1);
  });

  it('answers falsy results as results (only LOST_RACE goes again)', async () => {
    // Act / Assess
    await expect(optimisticRounds(BOUND, async () => undefined)).resolves.toBeUndefined();
    await expect(optimisticRounds(BOUND, async () => false)).resolves.toBe(false);
  });
});
