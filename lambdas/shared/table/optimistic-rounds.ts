import { TemporarilyUnavailableError } from '../errors';
import { atSite } from './round-site';
import { roundLost } from './rounds-lost';

/**
 * The one way a write path runs an optimistic round: read, decide, write conditionally; when the
 * condition says another writer changed what was read (a lost race), read again and decide again,
 * up to a named bound; past it, 503 `temporarily_unavailable` with Retry-After (nothing was written
 * by the rounds that lost, so the same request again is safe).
 *
 * A round answers `LOST_RACE` to go again, or its result. DynamoDB's contention answers (throttles,
 * transaction conflicts) are not lost races: the shared client retries them (shared/table/contention.ts)
 * and what it gives up on surfaces from the round as it is. A round that meets something it cannot
 * explain throws, as any code does: a bound is for races, not for bugs.
 *
 *     const contact = await optimisticRounds(CLAIM_ROUNDS, async () => {
 *       const claim = await readClaim(...);
 *       const reasons = await transactWrite([...]);
 *       return reasons ? LOST_RACE : contact;
 *     });
 */
export const LOST_RACE: unique symbol = Symbol('lost race');
export type RoundResult<T> = T | typeof LOST_RACE;

/**
 * A bound on rounds, named for the log line a 503 leaves (`what` kept changing under the writer) and for the
 * metric of rounds lost (`site`, a short constant such as `contacts.update`: ./rounds-lost.ts).
 */
export type RoundBound = { readonly what: string; readonly rounds: number; readonly site: string };

/** Runs the rounds under the bound's site (./round-site.ts), counting each lost one there. */
export function optimisticRounds<T>(
  bound: RoundBound,
  round: (roundNumber: number) => Promise<RoundResult<T>>,
): Promise<T> {
  return atSite(bound.site, async () => {
    for (let roundNumber = 0; roundNumber < bound.rounds; roundNumber += 1) {
      const result = await round(roundNumber);
      if (result !== LOST_RACE) return result;
      roundLost(bound.site);
    }
    throw new TemporarilyUnavailableError(`${bound.what}: lost the race ${bound.rounds} times`);
  });
}
