import type { LimitsStats } from '../../local/dynamodb-limits/meters';

/**
 * Rounds lost per site, for the soak's report: the runtime's own count of the optimistic rounds and conditional
 * writes each site lost (lambdas/shared/table/rounds-lost.ts), beside what the limits engine refused for requests
 * naming that site (its `refusals` meter: requests, and the conditions that failed most, as `<operation> <reason>
 * <key shape>`). An engine site is a path (`spend.charge>texting.store`: a charge round storing its message); it is
 * listed under its first site, the round the request belonged to.
 */
export type SiteRounds = {
  site: string;
  /** Rounds the runtime counted lost at this site. */
  lost: number;
  /** Per 1,000 requests of the soak. */
  perThousand: number;
  /** Requests the engine refused under this site (any path starting with it). */
  refused: number;
  /** The conditions refused under this site, with counts, most first (the report prints the first three). */
  conditions: string[];
};

export function roundsLostPerSite(
  lost: Record<string, number>,
  refusals: LimitsStats['refusals'],
  requests: number,
): SiteRounds[] {
  const sites = new Map<string, SiteRounds>();
  const siteRow = (site: string) => {
    let row = sites.get(site);
    if (!row) sites.set(site, (row = { site, lost: 0, perThousand: 0, refused: 0, conditions: [] }));
    return row;
  };
  for (const [site, count] of Object.entries(lost)) siteRow(site).lost += count;
  const conditionsOf = new Map<string, Map<string, number>>();
  for (const [path, meter] of Object.entries(refusals.bySite)) {
    const site = path.split('>')[0];
    siteRow(site).refused += meter.requests;
    const counts = conditionsOf.get(site) ?? new Map<string, number>();
    conditionsOf.set(site, counts);
    for (const [condition, count] of Object.entries(meter.conditions)) {
      const named = path === site ? condition : `${condition} (${path})`;
      counts.set(named, (counts.get(named) ?? 0) + count);
    }
  }
  for (const row of sites.values()) {
    row.perThousand = requests > 0 ? Math.round((row.lost / requests) * 10_000) / 10 : 0;
    row.conditions = [...(conditionsOf.get(row.site) ?? new Map()).entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([condition, count]) => `${condition} x${count}`);
  }
  return [...sites.values()].sort((a, b) => b.lost + b.refused - (a.lost + a.refused));
}
