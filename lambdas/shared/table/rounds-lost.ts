import { metrics, MetricUnit } from '../aws';

/**
 * Rounds lost, by site: each time a conditional write or transaction at a named site is refused for
 * its condition and the code reads the refusal as a race (it goes again, or answers a conflict). On
 * AWS each counts as the CloudWatch metric `RoundsLost` with the dimension `site` (embedded metric
 * format, one log line per lost round: the round already cost a trip to the table); in any process
 * (the local runtime, a test) it also counts in memory, which the bench reads.
 *
 * Nothing is counted on the path that wins: a site is a string constant, and the counter one map.
 */
export const ROUNDS_LOST_METRIC = 'RoundsLost';

const lost = new Map<string, number>();

/** Counts one lost round at `site`. */
export function roundLost(site: string): void {
  lost.set(site, (lost.get(site) ?? 0) + 1);
  metrics.singleMetric().addDimension('site', site).addMetric(ROUNDS_LOST_METRIC, MetricUnit.Count, 1);
}

/** The rounds this process lost, by site, since it started or was last reset. */
export const roundsLostBySite = (): Record<string, number> => Object.fromEntries(lost);

/** Clears the counts (between measurements). */
export function resetRoundsLost(): void {
  lost.clear();
}
